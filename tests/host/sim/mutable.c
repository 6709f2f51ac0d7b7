// SPDX-License-Identifier: GPL-2.0-only
/* Linked into crashsim-mut only: the core it links has broken variants. */
const int crashsim_core_mutable = 1;
