// ptxlab stub (device reference GEMM, unused)
#pragma once
