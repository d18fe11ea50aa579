"""What holds the GPUs: allocated but idle (idle.py), judged over the readings a dashboard or `serve` takes."""
