"""`gpudash serve`'s HTTP(S) server: nothing a client does can stall another client's scrape.

Each connection is served by a thread of its own, which also does the TLS handshake, so the accepting thread
never waits on a client. Every phase of a connection has a deadline (handshake, waiting for a request, reading
it, writing the answer), and the number of open connections is capped: beyond the cap, the connection that has
waited longest without a request in progress is closed to make room, and when every connection is being
answered the new one is closed at once. `--web-config` takes the file Prometheus's exporters share
(exporter-toolkit's web configuration: TLS settings and basic-auth users with bcrypt hashes), read again when it
or a certificate it names changes.

The modules:
  limits.py        the deadlines and the cap, and the cap the file-descriptor limit allows
  web_config.py    exporter-toolkit's web configuration file, checked key by key
  reload.py        the web config and --tls-cert/--tls-key read again when their files change; a file that turns
                   bad keeps the last good
  tls.py           an SSLContext from a certificate, its key and the client-certificate policy
  basic_auth.py    basic-auth users with bcrypt hashes, checked one at a time, results cached
  http11.py        one HTTP/1.1 request head parsed; one answer written
  connections.py   the open connections: admission under the cap, which one to close for a new one
  server.py        the listening socket, the accepting thread, one thread per connection
"""

from gpudash.exporter.server.limits import Limits
from gpudash.exporter.server.server import Server
from gpudash.exporter.server.web_config import TLSSettings, WebConfig, load_web_config

__all__ = ["Limits", "Server", "TLSSettings", "WebConfig", "load_web_config"]
