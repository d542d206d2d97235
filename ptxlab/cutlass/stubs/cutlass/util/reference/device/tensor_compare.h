// ptxlab stub (device compare, unused)
#pragma once
