# torch.cuda.graphs: capture a forward+backward on a side stream, replay it.
import torch
m = torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 512)).cuda()
x = torch.randn(128, 512, device="cuda")
s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(3):
        m.zero_grad(set_to_none=True); m(x).square().mean().backward()
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
m.zero_grad(set_to_none=True)
with torch.cuda.graph(g):
    loss = m(x).square().mean(); loss.backward()
for i in range(4):
    x.copy_(torch.randn(128, 512, device="cuda")); g.replay()
torch.cuda.synchronize(); print("torch_graph: ok, replays 4, loss finite:", bool(torch.isfinite(loss).item()))
