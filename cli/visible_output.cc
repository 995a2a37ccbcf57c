#include "cli/visible_output.h"

namespace nmsparse::cli {

VisibleOutput::~VisibleOutput() {
  Write(filter_.Flush());
  target_.flush();
}

void VisibleOutput::WriteControl(std::string_view sequence) {
  Write(filter_.Flush());
  target_.write(sequence.data(), static_cast<std::streamsize>(sequence.size()));
}

VisibleOutput::int_type VisibleOutput::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  const char byte = traits_type::to_char_type(c);
  Write(filter_.Filter(std::string_view(&byte, 1)));
  return c;
}

std::streamsize VisibleOutput::xsputn(const char* s, std::streamsize n) {
  Write(filter_.Filter(std::string_view(s, static_cast<size_t>(n))));
  return n;
}

int VisibleOutput::sync() {
  Write(filter_.Flush());
  target_.flush();
  return target_.good() ? 0 : -1;
}

void VisibleOutput::Write(const std::string& text) {
  if (!text.empty()) target_.write(text.data(), static_cast<std::streamsize>(text.size()));
}

}  // namespace nmsparse::cli
