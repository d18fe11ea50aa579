"""Its check imports torch, multiplies two 1024x1024 matrices and reports the child's VmPeak (/proc/self/status):
what a torch plugin needs of the address-space limit."""

from gpudash.plugins_api import Check, hookimpl


class TorchPeak(Check):
    name = "torch_peak"
    needs_device = False

    def run(self, device):
        import torch

        product = torch.randn(1024, 1024) @ torch.randn(1024, 1024)
        with open("/proc/self/status") as status:
            peak = next(int(line.split()[1]) for line in status if line.startswith("VmPeak:"))
        return self.passed(
            f"torch {torch.__version__}: VmPeak {peak // 1024} MiB",
            details={"vm_peak_kib": peak, "sum": float(product.sum())},
        )


@hookimpl
def register_checks(register):
    register(TorchPeak())
