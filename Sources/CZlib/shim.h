#ifndef IMPRINT_CZLIB_SHIM_H
#define IMPRINT_CZLIB_SHIM_H
#include <zlib.h>
#endif
