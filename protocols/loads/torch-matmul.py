# cablequal GPU load without building anything: 8192 x 8192 float32 matmuls on the GPU for the seconds given as the
# only argument (the protocol passes {durationS}). Runs in NVIDIA's PyTorch container; install it on each node as
# /opt/cablequal/torch-matmul.py (docs/operator-guide.md, "The GPU load"). The code lives on the node, never in the
# protocol file: a protocol cannot hand an interpreter program text (-c), so nothing in it runs as code on a node.
import sys
import time

import torch

seconds = float(sys.argv[1])
a = torch.randn(8192, 8192, device="cuda")
end = time.monotonic() + seconds
while time.monotonic() < end:
    for _ in range(16):
        a @ a
    torch.cuda.synchronize()
