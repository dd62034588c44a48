#pragma once
// The flag parser lives in core (shared with the worker).
#include "core/args.h"
