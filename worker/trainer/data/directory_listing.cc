#include "worker/trainer/data/directory_listing.h"

#include <dirent.h>

#include <algorithm>

namespace nmsparse {

std::vector<std::string> SortedNames(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> SortedVisibleNames(const std::string& dir) {
  std::vector<std::string> names = SortedNames(dir);
  names.erase(std::remove_if(names.begin(), names.end(), [](const std::string& n) { return n[0] == '.'; }),
              names.end());
  return names;
}

}  // namespace nmsparse
