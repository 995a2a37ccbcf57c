"""A fuzz target: a libFuzzer binary under --config=fuzz (tools/fuzz.sh), else a test that replays its corpus."""

def nm_fuzz_test(name, deps):
    """cc_test NAME from NAME.cc, whose committed seed corpus is corpus/NAME/.

    Under --define=libfuzzer=1 (the fuzz config) it links libFuzzer's main; otherwise corpus_replay_main, so
    that //:all_tests runs every committed input (found crashes included) once.
    """
    native.cc_test(
        name = name,
        size = "small",
        srcs = [name + ".cc"],
        args = ["fuzz/corpus/" + name],
        data = native.glob(["corpus/%s/*" % name]),
        linkopts = select({
            ":libfuzzer": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        deps = deps + [":fuzz_check"] + select({
            ":libfuzzer": [],
            "//conditions:default": [":corpus_replay_main"],
        }),
    )
