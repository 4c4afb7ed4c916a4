// Linked with flygemm::flygemm but references no symbol of torch or flygemm, the hardest case
// for the link: the dynamic loader must still load flygemm's library (kept in DT_NEEDED
// despite --as-needed) and resolve its torch dependencies (the library has no RUNPATH, so
// this relies on the link order set by flygemmConfig.cmake). Prints OK when the library is
// mapped into the process.
#include <cstdio>
#include <fstream>
#include <string>

int main() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.size() >= 6 && line.compare(line.size() - 6, 6, "/_C.so") == 0 &&
        line.find("flygemm") != std::string::npos) {
      std::printf("mapped: %s\nOK\n", line.substr(line.find('/')).c_str());
      return 0;
    }
  }
  std::printf("FAIL: flygemm's _C.so is not loaded\n");
  return 1;
}
