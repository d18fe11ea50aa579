"""The precision names used in every contract (gpudash/contracts/), in display order."""

PRECISIONS = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "int8", "fp4")

# How each precision is shown on a device card badge: fp8 covers both fp8 flavours.
BADGE_PRECISIONS = ("fp64", "tf32", "fp16", "bf16", "fp8", "int8")
