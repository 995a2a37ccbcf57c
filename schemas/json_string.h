// A JSON string literal for any bytes: the one encoder behind the trainer's metric lines and the
// coordinator's JSON export (torch- and gRPC-free, so both sides of that boundary can use it).
#ifndef NMSPARSE_SCHEMAS_JSON_STRING_H_
#define NMSPARSE_SCHEMAS_JSON_STRING_H_

#include <string>

namespace nmsparse {

// `s` quoted: '"' and '\' escaped, \n \r \t by name, other control bytes as \u00XX; every other byte as is.
std::string JsonString(const std::string& s);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_JSON_STRING_H_
