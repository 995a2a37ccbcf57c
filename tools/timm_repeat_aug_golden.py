"""Prints timm's RepeatAugSampler order: the golden file worker/trainer/data/testdata/timm_repeat_aug.txt,
which repeat_aug_test compares with nmsparse's worker/trainer/data/repeat_aug_sampler.h (issue 24). The
shuffles differ (timm: torch.randperm seeded by the epoch; nmsparse: SplitMix64 seeded by (seed, epoch)), so
each case records the permutation timm drew and the test feeds that permutation to nmsparse's sampler. Run by
tools/check_timm_goldens.sh.
"""
import torch
from timm.data.distributed_sampler import RepeatAugSampler

# (dataset size, repeats, world, epoch): above and below selected_round (256), one and several ranks, and a
# size where the repeated order wraps around (ceil(n / world) * world > n with repeats 1).
CASES = [(1000, 3, 1, 0), (1000, 3, 2, 1), (1000, 3, 4, 2), (600, 2, 3, 3), (100, 3, 2, 4), (100, 3, 3, 5),
         (257, 1, 3, 6), (10, 1, 4, 7)]

print("# case N REPEATS WORLD, then perm (timm's shuffle of epoch), then rank R: the indices rank R reads")
for n, repeats, world, epoch in CASES:
    print("case %d %d %d" % (n, repeats, world))
    g = torch.Generator()
    g.manual_seed(epoch)
    print("perm " + " ".join(str(i) for i in torch.randperm(n, generator=g).tolist()))
    for rank in range(world):
        sampler = RepeatAugSampler(list(range(n)), num_replicas=world, rank=rank, num_repeats=repeats)
        sampler.set_epoch(epoch)
        print("rank %d %s" % (rank, " ".join(str(i) for i in sampler)))
