"""SchedulingProfiles: the pydantic models (``models``), upstream's defaults (``defaults``),
compilation into a framework (``compile``), the live map (``profile_map``) and the CRD (``crd``)."""

from scheduler.profiles.compile import compile_profile, parse_spec
from scheduler.profiles.crd import GROUP, KIND, PLURAL, VERSION, crd, crd_yaml
from scheduler.profiles.models import SchedulingProfileSpec
from scheduler.profiles.profile_map import ProfileMap

__all__ = ["GROUP", "KIND", "PLURAL", "VERSION", "ProfileMap", "SchedulingProfileSpec", "compile_profile",
           "crd", "crd_yaml", "parse_spec"]
