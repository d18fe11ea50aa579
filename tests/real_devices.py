"""Device names and arch ids as users' tools print them, with the family and peak coverage the vendors' tables give.

Each row: (tool, vendor, name, cc or gfx spelling, family, peaks) where peaks is
  "spec"       a named part: datasheet figures (and spec-derived ones for what the datasheet leaves out);
  "partial"    a named part of which only some figures were confirmed (docs/peak-sources.md): those figures, and
               possibly no bandwidth or no compute figure;
  "ambiguous"  the name covers several products: candidates, never one product's figures;
  "none"       no datasheet row (laptop parts, most workstation cards, generic APU names, and parts whose vendor figures
               could not be confirmed): only a formula with the device's own SM/CU count and clock, which these
               name-only rows do not have.
Tools: nvidia-smi --query-gpu=name,compute_cap; torch.cuda.get_device_properties(i).name / .gcnArchName;
rocminfo "Marketing Name" / "Name"; rocm-smi --showproductname "Card Series" / "GFX Version" (before 2025 it printed
gfx90a as "gfx9010" and gfx1100 as "gfx11000"); amd-smi static MARKET_NAME / TARGET_GRAPHICS_VERSION.
"""

from __future__ import annotations

SMI, TORCH, ROCMINFO, ROCMSMI, AMDSMI = "nvidia-smi", "torch", "rocminfo", "rocm-smi", "amd-smi"

REAL_DEVICES: list[tuple[str, str, str, str, str, str]] = [
    # NVIDIA datacenter
    (SMI, "nvidia", "NVIDIA H100 80GB HBM3", "9.0", "Hopper", "spec"),
    (SMI, "nvidia", "NVIDIA H100 PCIe", "9.0", "Hopper", "spec"),
    (SMI, "nvidia", "NVIDIA H100 NVL", "9.0", "Hopper", "spec"),
    (SMI, "nvidia", "NVIDIA H200", "9.0", "Hopper", "spec"),
    (SMI, "nvidia", "NVIDIA H200 NVL", "9.0", "Hopper", "spec"),
    (SMI, "nvidia", "NVIDIA GH200 480GB", "9.0", "Hopper", "ambiguous"),  # 96 GB HBM3 or 144 GB HBM3e
    (SMI, "nvidia", "NVIDIA GH200 144G HBM3e", "9.0", "Hopper", "spec"),
    (SMI, "nvidia", "NVIDIA B200", "10.0", "Blackwell", "spec"),
    (SMI, "nvidia", "NVIDIA GB200", "10.0", "Blackwell", "spec"),
    (SMI, "nvidia", "NVIDIA B300 SXM6 AC", "10.3", "Blackwell", "spec"),
    (SMI, "nvidia", "NVIDIA A100-SXM4-80GB", "8.0", "Ampere", "spec"),
    (SMI, "nvidia", "NVIDIA A100-SXM4-40GB", "8.0", "Ampere", "spec"),
    (SMI, "nvidia", "NVIDIA A100 80GB PCIe", "8.0", "Ampere", "spec"),
    (SMI, "nvidia", "NVIDIA A100-PCIE-40GB", "8.0", "Ampere", "spec"),
    (SMI, "nvidia", "NVIDIA A30", "8.0", "Ampere", "spec"),
    (SMI, "nvidia", "NVIDIA A10", "8.6", "Ampere", "spec"),
    (SMI, "nvidia", "NVIDIA A10G", "8.6", "Ampere", "none"),  # cloud variant without an NVIDIA datasheet
    (SMI, "nvidia", "NVIDIA A40", "8.6", "Ampere", "spec"),
    (SMI, "nvidia", "NVIDIA L4", "8.9", "Ada", "spec"),
    (SMI, "nvidia", "NVIDIA L40", "8.9", "Ada", "spec"),
    (SMI, "nvidia", "NVIDIA L40S", "8.9", "Ada", "spec"),
    (SMI, "nvidia", "Tesla V100-SXM2-16GB", "7.0", "Volta", "spec"),
    (SMI, "nvidia", "Tesla V100-SXM2-32GB", "7.0", "Volta", "spec"),
    (SMI, "nvidia", "Tesla V100-PCIE-16GB", "7.0", "Volta", "spec"),
    (SMI, "nvidia", "Tesla V100S-PCIE-32GB", "7.0", "Volta", "spec"),
    (SMI, "nvidia", "Tesla P100-PCIE-16GB", "6.0", "Pascal", "spec"),
    (SMI, "nvidia", "Tesla P100-SXM2-16GB", "6.0", "Pascal", "partial"),
    (SMI, "nvidia", "Tesla T4", "7.5", "Turing", "spec"),
    (SMI, "nvidia", "Tesla K80", "3.7", "Kepler", "spec"),  # per GPU: one of the board's two GK210s
    # Kepler GK110 Teslas as CUDA and nvidia-smi name them (GitHub text, search-index ids 3519027908, 8981308041)
    (SMI, "nvidia", "Tesla K40m", "3.5", "Kepler", "spec"),
    (SMI, "nvidia", "Tesla K20Xm", "3.5", "Kepler", "spec"),
    (SMI, "nvidia", "Tesla K20m", "3.5", "Kepler", "spec"),
    (SMI, "nvidia", "Tesla P40", "6.1", "Pascal", "spec"),
    (SMI, "nvidia", "Tesla P4", "6.1", "Pascal", "spec"),
    (TORCH, "nvidia", "Orin", "8.7", "Ampere", "ambiguous"),  # every Jetson Orin module
    (TORCH, "nvidia", "NVIDIA GB10", "12.1", "Blackwell", "spec"),  # fp32, dense fp4 and bandwidth; no clock
    # NVIDIA GeForce / workstation
    (SMI, "nvidia", "NVIDIA GeForce RTX 5090", "12.0", "Blackwell", "spec"),
    (SMI, "nvidia", "NVIDIA GeForce RTX 5090 D", "12.0", "Blackwell", "spec"),
    (SMI, "nvidia", "NVIDIA GeForce RTX 5080", "12.0", "Blackwell", "spec"),
    (SMI, "nvidia", "NVIDIA GeForce RTX 5070 Ti", "12.0", "Blackwell", "spec"),
    (SMI, "nvidia", "NVIDIA GeForce RTX 5070", "12.0", "Blackwell", "partial"),
    (SMI, "nvidia", "NVIDIA GeForce RTX 5060 Ti", "12.0", "Blackwell", "spec"),
    (SMI, "nvidia", "NVIDIA GeForce RTX 5090 Laptop GPU", "12.0", "Blackwell", "none"),
    (TORCH, "nvidia", "NVIDIA GeForce RTX 4090", "8.9", "Ada", "spec"),
    (SMI, "nvidia", "NVIDIA GeForce RTX 4090 D", "8.9", "Ada", "partial"),
    (SMI, "nvidia", "NVIDIA GeForce RTX 4080 SUPER", "8.9", "Ada", "spec"),
    (SMI, "nvidia", "NVIDIA GeForce RTX 4070 Ti SUPER", "8.9", "Ada", "spec"),
    (SMI, "nvidia", "NVIDIA GeForce RTX 4060 Ti", "8.9", "Ada", "spec"),
    (SMI, "nvidia", "NVIDIA GeForce RTX 4090 Laptop GPU", "8.9", "Ada", "none"),
    # laptop parts: NVIDIA gives a boost-clock range per laptop, no single figure, so no row (GitHub text,
    # search-index ids 59175194042 for the 4050, 56807652786 for the 5070 Ti)
    (TORCH, "nvidia", "NVIDIA GeForce RTX 4050 Laptop GPU", "8.9", "Ada", "none"),
    (SMI, "nvidia", "NVIDIA GeForce RTX 4070 Laptop GPU", "8.9", "Ada", "none"),
    (SMI, "nvidia", "NVIDIA GeForce RTX 4080 Laptop GPU", "8.9", "Ada", "none"),
    (SMI, "nvidia", "NVIDIA GeForce RTX 5070 Ti Laptop GPU", "12.0", "Blackwell", "none"),
    (SMI, "nvidia", "NVIDIA GeForce RTX 5080 Laptop GPU", "12.0", "Blackwell", "none"),
    (TORCH, "nvidia", "NVIDIA GeForce RTX 3090", "8.6", "Ampere", "spec"),
    (SMI, "nvidia", "NVIDIA GeForce RTX 3090 Ti", "8.6", "Ampere", "spec"),
    (SMI, "nvidia", "NVIDIA GeForce RTX 3080", "8.6", "Ampere", "spec"),
    (SMI, "nvidia", "NVIDIA GeForce RTX 3060", "8.6", "Ampere", "partial"),  # no bandwidth: 12 GB and 8 GB cards
    (SMI, "nvidia", "NVIDIA GeForce RTX 3060 Laptop GPU", "8.6", "Ampere", "none"),
    (SMI, "nvidia", "NVIDIA GeForce RTX 3080 Ti Laptop GPU", "8.6", "Ampere", "none"),  # not the desktop 3080 Ti
    # older drivers' laptop spelling (GitHub text, search-index id 55164416669): never the desktop card
    (SMI, "nvidia", "NVIDIA GeForce RTX 2070 with Max-Q Design", "7.5", "Turing", "none"),
    (SMI, "nvidia", "NVIDIA GeForce RTX 2080 Ti", "7.5", "Turing", "spec"),
    (SMI, "nvidia", "NVIDIA GeForce RTX 2080", "7.5", "Turing", "spec"),
    (SMI, "nvidia", "NVIDIA GeForce RTX 2070", "7.5", "Turing", "spec"),
    (SMI, "nvidia", "NVIDIA GeForce RTX 2060", "7.5", "Turing", "spec"),
    (SMI, "nvidia", "NVIDIA GeForce RTX 2060 SUPER", "7.5", "Turing", "none"),  # 34 SMs: no row
    (SMI, "nvidia", "NVIDIA GeForce GTX 1660 SUPER", "7.5", "Turing", "spec"),
    (SMI, "nvidia", "NVIDIA GeForce GTX 1660 Ti", "7.5", "Turing", "spec"),
    (SMI, "nvidia", "NVIDIA GeForce GTX 1660", "7.5", "Turing", "spec"),
    (SMI, "nvidia", "NVIDIA GeForce GTX 1650", "7.5", "Turing", "none"),
    (SMI, "nvidia", "NVIDIA GeForce GTX 1080 Ti", "6.1", "Pascal", "none"),
    (SMI, "nvidia", "NVIDIA RTX A6000", "8.6", "Ampere", "partial"),  # fp32 and bandwidth only
    # Turing Quadros, spelled with and without "NVIDIA" (a GPU tool's device list: search-index id 24892642895)
    (SMI, "nvidia", "Quadro RTX 8000", "7.5", "Turing", "spec"),
    (SMI, "nvidia", "Quadro RTX 6000", "7.5", "Turing", "spec"),
    (SMI, "nvidia", "Quadro RTX 5000", "7.5", "Turing", "spec"),
    (SMI, "nvidia", "NVIDIA Quadro RTX 4000", "7.5", "Turing", "spec"),
    (SMI, "nvidia", "Quadro RTX 5000 with Max-Q Design", "7.5", "Turing", "none"),  # the laptop part
    (SMI, "nvidia", "NVIDIA RTX 6000 Ada Generation", "8.9", "Ada", "partial"),
    (SMI, "nvidia", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "12.0", "Blackwell", "partial"),
    # AMD Instinct
    (ROCMINFO, "amd", "AMD Instinct MI300X", "gfx942", "CDNA3", "spec"),
    (TORCH, "amd", "AMD Instinct MI300X", "gfx942:sramecc+:xnack-", "CDNA3", "spec"),
    # One SR-IOV function per MI300X (AMD's MxGPU-Virtualization support table): the whole GPU; a partition
    # would show by its CU count (tests/test_knowledge.py)
    (ROCMINFO, "amd", "AMD Instinct MI300X VF", "gfx942", "CDNA3", "spec"),
    (ROCMINFO, "amd", "AMD Instinct MI325X", "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", "CDNA3", "spec"),
    (ROCMINFO, "amd", "AMD Instinct MI300A", "gfx942", "CDNA3", "spec"),
    (ROCMINFO, "amd", "AMD Instinct MI355X", "gfx950", "CDNA4", "spec"),
    (AMDSMI, "amd", "AMD Instinct MI350X", "gfx950", "CDNA4", "spec"),
    (ROCMINFO, "amd", "AMD Instinct MI250X/MI250", "gfx90a", "CDNA2", "ambiguous"),
    (TORCH, "amd", "AMD Instinct MI210", "gfx90a:sramecc+:xnack-", "CDNA2", "spec"),
    (ROCMSMI, "amd", "AMD INSTINCT MI250 (MCM) OAM AC MBA", "gfx9010", "CDNA2", "spec"),
    (ROCMSMI, "amd", "Arcturus GL-XL [AMD Instinct MI100]", "gfx908", "CDNA1", "spec"),
    # AMD GCN
    (ROCMINFO, "amd", "Vega 20 [Radeon VII]", "gfx906", "GCN5.1", "none"),
    (ROCMSMI, "amd", "Vega 20 [Radeon VII]", "gfx9006", "GCN5.1", "none"),
    (ROCMINFO, "amd", "Vega 10 XL/XT [Radeon RX Vega 56/64]", "gfx900", "GCN5", "none"),
    (ROCMINFO, "amd", "AMD Radeon Graphics", "gfx90c", "GCN5", "none"),
    (ROCMSMI, "amd", "Ellesmere [Radeon RX 470/480/570/570X/580/580X/590]", "gfx803", "GCN4", "ambiguous"),
    # rocminfo's Marketing Name for Polaris cards (GitHub text, search-index ids 31074480960, 68692344775)
    (ROCMINFO, "amd", "Radeon RX 580 Series", "gfx803", "GCN4", "partial"),  # no bandwidth: 4 GB and 8 GB cards
    (ROCMINFO, "amd", "Radeon RX 580", "gfx803", "GCN4", "partial"),
    (ROCMINFO, "amd", "Radeon RX 570 Series", "gfx803", "GCN4", "partial"),
    (TORCH, "amd", "AMD Radeon RX 480", "gfx803", "GCN4", "partial"),
    (TORCH, "amd", "AMD Radeon RX 470", "gfx803", "GCN4", "partial"),
    # the China-only 32-CU card sold under the RX 580 name (GitHub text, search-index id 69698947482)
    (TORCH, "amd", "AMD Radeon RX 580 2048SP", "gfx803", "GCN4", "none"),
    # AMD Radeon
    (ROCMINFO, "amd", "AMD Radeon RX 7900 XTX", "gfx1100", "RDNA3", "spec"),
    (ROCMINFO, "amd", "Radeon RX 7900 XTX", "gfx1100", "RDNA3", "spec"),
    (ROCMSMI, "amd", "Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]", "gfx11000", "RDNA3", "ambiguous"),
    (AMDSMI, "amd", "Radeon Pro W7900", "gfx1100", "RDNA3", "none"),
    (ROCMINFO, "amd", "AMD Radeon Graphics", "gfx1103", "RDNA3", "none"),
    (ROCMINFO, "amd", "AMD Radeon RX 9070 XT", "gfx1201", "RDNA4", "spec"),
    (ROCMINFO, "amd", "AMD Radeon AI PRO R9700", "gfx1201", "RDNA4", "none"),
    (ROCMINFO, "amd", "AMD Radeon Graphics", "gfx1201", "RDNA4", "none"),
    (ROCMINFO, "amd", "AMD Radeon RX 6900 XT", "gfx1030", "RDNA2", "spec"),
    (ROCMSMI, "amd", "Navi 10 [Radeon RX 5600 OEM/5600 XT / 5700/5700 XT]", "gfx1010", "RDNA1", "ambiguous"),
    (TORCH, "amd", "AMD Radeon RX 5600 XT", "gfx1010", "RDNA1", "spec"),
    (AMDSMI, "amd", "Radeon 8060S Graphics", "gfx1151", "RDNA3.5", "spec"),
    # the same APU as rocminfo's Marketing Name and a torch probe print it (issue 22; GitHub text, search-index
    # ids 56855360367, 67205002707): the (TM) mark is no part of the product's name
    (ROCMINFO, "amd", "AMD Radeon(TM) 8060S Graphics", "gfx1151", "RDNA3.5", "spec"),
    (TORCH, "amd", "AMD Radeon(TM) 8060S Graphics", "gfx1151", "RDNA3.5", "spec"),
    # detected names with the mark before the series (GitHub text, search-index id 71274590132)
    (ROCMINFO, "amd", "AMD Radeon(TM) RX 7900 XTX", "gfx1100", "RDNA3", "spec"),
    (ROCMINFO, "amd", "AMD Radeon Graphics", "gfx1151", "RDNA3.5", "none"),
]
