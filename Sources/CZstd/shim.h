#ifndef IMPRINT_CZSTD_SHIM_H
#define IMPRINT_CZSTD_SHIM_H
#include <zstd.h>
#endif
