"""Never finishes importing, as a module blocked on a lock or a device would."""

import time

time.sleep(600)
