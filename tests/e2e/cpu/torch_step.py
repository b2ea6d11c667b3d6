#!/usr/bin/python3
"""A small training loop on Debian's PyTorch (CPU build): a two-layer MLP,
cross entropy, SGD, 200 steps. Prints the final loss, the same untraced and
traced (the seed and the thread count are fixed)."""
import torch

torch.manual_seed(0)
torch.set_num_threads(2)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(256, 64)
y = torch.randint(0, 10, (256,))
for step in range(200):
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
print('loss %.6f' % loss.item())
