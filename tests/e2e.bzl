"""The shape every end-to-end test of this package shares: a script under tests/ that gets the real programs'
paths, then its input files, as arguments (tests/e2e_lib.sh reads them in that order)."""

_PROGRAMS = ["//server:nmserver", "//worker/agent:nmworker", "//cli:nmctl"]

def e2e_test(name, size, inputs, trainer = True, extra_data = [], exclusive = True):
    """An sh_test running tests/<name>.sh NMSERVER NMWORKER NMCTL [NMTRAIN] INPUTS...

    Args:
      name: the test, and its script's name without .sh.
      size: Bazel's test size.
      inputs: files passed after the programs, in order (sweep files, stand-ins).
      trainer: whether the real nmtrain is passed (after nmctl) and built.
      extra_data: more files the script reads without taking them as arguments.
      exclusive: alone on the machine (tests with real trainers, whose timings should not compete with other
        tests for two cores).
    """
    programs = _PROGRAMS + (["//worker/trainer:nmtrain"] if trainer else [])
    native.sh_test(
        name = name,
        size = size,
        srcs = [name + ".sh"],
        args = ["$(rootpath %s)" % p for p in programs + inputs],
        data = ["e2e_lib.sh"] + inputs + extra_data + programs,
        tags = ["exclusive"] if exclusive else [],
    )
