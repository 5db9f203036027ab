"""Loads the hypothesis profiles for the sdk_gen tests (see sdkgen_helpers)."""

import sdkgen_helpers  # noqa: F401  (registers and loads the profile)
