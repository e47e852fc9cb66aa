/* The linear kernel's element types' table (linear_types.h), made from its one list. */
#include "linear_types.h"

#define LINEAR_TYPE_ROW(name, stored, acc, out) \
    [T_##name] = {#name, sizeof(stored), sizeof(acc), T_##out},
const LinearType linear_types[T_COUNT] = {LINEAR_TYPES(LINEAR_TYPE_ROW)};
#undef LINEAR_TYPE_ROW
