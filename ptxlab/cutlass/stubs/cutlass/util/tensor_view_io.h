// ptxlab stub of cutlass/util/tensor_view_io.h (host printing)
#pragma once
