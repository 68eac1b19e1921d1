// A file's bytes in the library's read-only data, copied by the assembler
// (.incbin) at build time: the measured tables of numerics/ (rsqrt_approx,
// rcp_approx). The symbols are hidden, so no library built from this room
// exports them. `path` is a string literal (a compile definition).
#pragma once

#include <cstdint>

#define QCHECK_EMBED_FILE(begin, end, path)            \
  asm(".pushsection .rodata\n"                         \
      ".balign 64\n"                                   \
      ".hidden " #begin "\n"                           \
      ".hidden " #end "\n" #begin ":\n"                \
      ".incbin \"" path "\"\n" #end ":\n"              \
      ".popsection\n");                                \
  extern "C" const uint8_t begin[];                    \
  extern "C" const uint8_t end[]
