#ifndef IMPRINT_CARCHIVE_SHIM_H
#define IMPRINT_CARCHIVE_SHIM_H
#include <archive.h>
#include <archive_entry.h>
#endif
