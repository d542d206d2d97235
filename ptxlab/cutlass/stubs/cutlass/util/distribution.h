// ptxlab stub of cutlass/util/distribution.h (host only, unused by the captured path)
#pragma once
