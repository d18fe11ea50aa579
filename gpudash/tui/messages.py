"""Messages the dashboard's workers post to the UI thread, named for what already happened.

`post_message` is thread-safe, so thread workers post these instead of touching widgets.
"""

from __future__ import annotations

from textual.message import Message

from gpudash.devices.host_load import HostLoad
from gpudash.models import Sample


class SamplesReady(Message):
    """One reading of every device, keyed by DeviceInfo.key, and of the host (None on a replayed machine)."""

    def __init__(self, samples: dict[str, Sample], host_load: HostLoad | None = None) -> None:
        super().__init__()
        self.samples = samples
        self.host_load = host_load

    def can_replace(self, message: Message) -> bool:
        # If the UI fell behind, only the newest reading is worth drawing (toolong's coalescing).
        return isinstance(message, SamplesReady)


class TorchViewReady(Message):
    """torch finished importing and its view (versions, maybe devices) was merged into the machine."""

    def __init__(self, error: str | None = None) -> None:
        super().__init__()
        self.error = error  # why torch's view is missing, if it is
