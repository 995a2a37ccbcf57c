#!/usr/bin/env python3
"""The recipe parity bench's epoch-0 probe (docs/benchmarks.md): a micro ViT's top-1 on the Fashion-MNIST test
set, which classes it predicts, and how its logits split into a per-class offset shared by every image and an
image-dependent part, evaluated in timm's own model (so the same code reads both sides' weights).

Usage (the timm 1.0.31 venv's python):
  epoch0_probe.py init SEED...          freshly made timm models, seeded as train.py seeds them
  epoch0_probe.py timm CHECKPOINT       a train.py checkpoint (checkpoint-0.pth.tar): raw, then EMA
  epoch0_probe.py nmtrain CHECKPOINT    nmtrain's checkpoint.pt: its raw model (the model.* parameters)
"""
import gzip, sys
import numpy as np, torch, timm

def load_test(path='/usr/share/datasets/fashion-mnist'):
    with gzip.open(f'{path}/t10k-images-idx3-ubyte.gz') as f:
        x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)
    with gzip.open(f'{path}/t10k-labels-idx1-ubyte.gz') as f:
        y = np.frombuffer(f.read(), np.uint8, offset=8)
    x = (torch.from_numpy(x.copy()).float() / 255 - 0.2860) / 0.3530
    return x, torch.from_numpy(y.astype(np.int64))

def make_model():
    return timm.create_model('vit_tiny_patch16_224', num_classes=10, in_chans=1, patch_size=4, embed_dim=64,
                             depth=4, num_heads=4, img_size=28, drop_path_rate=0.0)

@torch.no_grad()
def probe(model, x, y, label):
    model.eval()
    logits = torch.cat([model(x[i:i + 500]) for i in range(0, len(x), 500)])
    pred = logits.argmax(1)
    top1 = (pred == y).float().mean().item() * 100
    hist = torch.bincount(pred, minlength=10).tolist()
    mean = logits.mean(0)  # per-class offset shared by all images
    spread_between_classes = (mean.max() - mean.min()).item()
    per_image = (logits - mean).std().item()  # image-dependent part
    print(f'{label}: top1 {top1:.2f}  classes predicted {sum(h > 0 for h in hist)}  hist {hist}  '
          f'class-offset range {spread_between_classes:.4f}  image-dependent std {per_image:.4f}', flush=True)

if __name__ == '__main__':
    x, y = load_test()
    mode = sys.argv[1]
    if mode == 'init':  # fresh timm models, as train.py seeds them (utils.random_seed(seed, 0))
        for seed in map(int, sys.argv[2:]):
            torch.manual_seed(seed); np.random.seed(seed)
            probe(make_model(), x, y, f'timm init seed {seed}')
    elif mode == 'timm':  # train.py checkpoint: raw, then EMA
        ck = torch.load(sys.argv[2], map_location='cpu', weights_only=False)
        for key in ('state_dict', 'state_dict_ema'):
            m = make_model(); m.load_state_dict(ck[key]); probe(m, x, y, f'{sys.argv[2]} {key}')
    elif mode == 'nmtrain':  # nmtrain's checkpoint.pt: model.* (raw)
        ck = torch.jit.load(sys.argv[2])
        params = dict(ck.named_parameters())
        sd = {k[len('model.'):]: v for k, v in params.items() if k.startswith('model.')}
        m = make_model(); m.load_state_dict(sd)
        probe(m, x, y, f'{sys.argv[2]} model')
