// The one way a fuzz target reports a broken property: print it and abort, which libFuzzer records as a
// crash with its input, and which fails the corpus replay test.
#ifndef NMSPARSE_FUZZ_FUZZ_CHECK_H_
#define NMSPARSE_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition, what)                                                              \
  do {                                                                                           \
    if (!(condition)) {                                                                          \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: %s\n", __FILE__, __LINE__, #condition, \
                   std::string(what).c_str());                                                   \
      std::abort();                                                                              \
    }                                                                                            \
  } while (false)

#endif  // NMSPARSE_FUZZ_FUZZ_CHECK_H_
