"""One profile table: the search's effort and the runner's time budget come from the same row,
and an unknown name is refused in one place, naming the choices."""

import pytest

from attnproof.numeric import _profiles, _strategies


def test_every_profile_has_an_effort_and_a_time_budget():
    assert _profiles.PROFILE_NAMES == ("quick", "default", "thorough")
    budgets = [_profiles.timeout(name) for name in _profiles.PROFILE_NAMES]
    assert all(b > 0 for b in budgets) and budgets == sorted(budgets)
    for name in _profiles.PROFILE_NAMES:
        chosen = _profiles.profile(name)
        assert chosen.name == name and chosen.truth.instances > 0
    assert _strategies.profile is _profiles.profile


@pytest.mark.parametrize("read", [_profiles.profile, _profiles.timeout])
def test_an_unknown_profile_is_refused_with_the_choices(read):
    with pytest.raises(ValueError, match="unknown profile 'fast'; choose one of quick, default, "
                                         "thorough"):
        read("fast")
