"""SchedulingProfile handlers: validate, compile, swap; report in ``status``; never lose the old one."""

from typing import Any

import kopf

from scheduler.runner import profile_status_body

GROUP, VERSION, PLURAL = "scheduling.kopf-scheduler.io", "v1alpha1", "schedulingprofiles"


@kopf.on.resume(GROUP, VERSION, PLURAL)
@kopf.on.create(GROUP, VERSION, PLURAL)
@kopf.on.update(GROUP, VERSION, PLURAL)
async def profile_changed(name: str, spec: kopf.Spec, meta: kopf.Meta, body: kopf.Body, patch: kopf.Patch,
                          memo: kopf.Memo, logger: kopf.Logger, **_: Any) -> None:
    st = memo.service.on_profile(name, dict(spec))
    generation = meta.get("generation")
    memo.service.profile_status[name] = (st, generation)
    if not memo.service.leader:
        return          # a standby compiles (warm) but writes nothing; the leader writes the status
    for key, value in profile_status_body(st, generation).items():
        patch.status[key] = value
    if st.accepted:
        logger.info(st.message)
    else:
        # The last good version keeps serving; the user sees why this edit was refused.
        kopf.warn(body, reason="InvalidProfile", message=f"profile rejected, the previous version keeps "
                                                         f"serving: {st.message}")


@kopf.on.delete(GROUP, VERSION, PLURAL, optional=True)
async def profile_deleted(name: str, memo: kopf.Memo, **_: Any) -> None:
    memo.service.remove_profile(name)
    memo.service.profile_status.pop(name, None)
