// Every row family, for the generated wrappers (gen/gen_cuda_hooks.py).
#pragma once

#include "preload/cuda/hook.h"
#include "preload/cuda/rows/call_row.h"
#include "preload/cuda/rows/copy_row.h"
#include "preload/cuda/rows/entry_point_row.h"
#include "preload/cuda/rows/graph_row.h"
#include "preload/cuda/rows/launch_row.h"
#include "preload/cuda/rows/memory_row.h"
#include "preload/cuda/rows/object_row.h"
#include "preload/cuda/rows/registration_row.h"
#include "preload/cuda/rows/runtime_row.h"
#include "preload/cuda/rows/sync_row.h"
#include "preload/intercept/hook_registry.h"
