"""Tests of the claim kinds: each kind's routes, and its planted true and false variants."""
