/*
 * include/veloc.h - VeloC's own examples and tests write
 * `#include "include/veloc.h"` (the header's place in VeloC's source tree).
 * This forwarding header gives that line the layer's veloc.h, in the tree
 * (-I src/compat/veloc) and installed (include/cairn/veloc/include/veloc.h
 * beside include/cairn/veloc/veloc.h, with pkg-config cairn-veloc's flags),
 * so such a program compiles unchanged. It declares nothing of its own.
 */
#include "../veloc.h"
