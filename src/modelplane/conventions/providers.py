"""What each in-cluster scheduler reads, as constants.

These are upstream keys and names (KAI v0.17, Kueue v0.19, Volcano v1.15,
scheduler-plugins v0.34, LWS v0.10, KServe v0.20), not Modelplane vocabulary,
so they live here rather than in `modelplane.core.vocabulary`.
"""

from typing import Final, Literal, get_args

Provider = Literal["Default", "KAI", "Kueue", "Volcano", "Coscheduling"]
PROVIDERS: Final[tuple[Provider, ...]] = get_args(Provider)
DEFAULT: Final = "Default"
KAI: Final = "KAI"
KUEUE: Final = "Kueue"
VOLCANO: Final = "Volcano"
COSCHEDULING: Final = "Coscheduling"

# The schedulerName each provider implies when the platform names none. Kueue is
# an admission layer over whatever scheduler the pods already use, and the
# default scheduler needs no name, so neither sets one.
DEFAULT_SCHEDULER_NAMES: Final[dict[str, str | None]] = {
    DEFAULT: None,
    KAI: "kai-scheduler",
    KUEUE: None,
    VOLCANO: "volcano",
    # The profile name of the scheduler-plugins "as-a-second-scheduler" chart.
    COSCHEDULING: "scheduler-plugins-scheduler",
}

# KAI.
KAI_QUEUE_LABEL: Final = "kai.scheduler/queue"
KAI_LEGACY_QUEUE_LABEL: Final = "runai/queue"
KAI_DEFAULT_QUEUE: Final = "default-queue"
KAI_PREEMPTIBILITY_LABEL: Final = "kai.scheduler/preemptibility"
KAI_PRIORITY_LABEL: Final = "priorityClassName"
KAI_SKIP_PODGROUPER: Final = "kai.scheduler/skip-podgrouper"
KAI_POD_GROUP_ANNOTATION: Final = "pod-group-name"
KAI_PODGROUP_API: Final = "scheduling.run.ai/v2alpha2"
PREEMPTIBLE: Final = "preemptible"
NON_PREEMPTIBLE: Final = "non-preemptible"
# KAI treats a PriorityClass value at or above this as non-preemptible.
KAI_NON_PREEMPTIBLE_FROM: Final = 100
# The PriorityClasses KAI installs, and the class its podgrouper assumes for a
# pod that names none, by the kind of the pod's top owner.
KAI_BUILTIN_PRIORITIES: Final[dict[str, int]] = {
    "train": 50,
    "build-preemptible": 75,
    "build": 100,
    "inference": 125,
}
KAI_KIND_DEFAULT_PRIORITY: Final[dict[str, str]] = {
    "Deployment": "inference",
    "LeaderWorkerSet": "train",
}
KAI_POD_GROUPERS: Final = ("Automatic", "Modelplane")

# Kueue.
KUEUE_QUEUE_LABEL: Final = "kueue.x-k8s.io/queue-name"
KUEUE_PRIORITY_LABEL: Final = "kueue.x-k8s.io/priority-class"
KUEUE_POD_GROUP_LABEL: Final = "kueue.x-k8s.io/pod-group-name"
KUEUE_POD_GROUP_COUNT: Final = "kueue.x-k8s.io/pod-group-total-count"
# Kueue's pod-group-name label for an LWS group is the LWS name plus a suffix,
# and a label value holds 63 characters: 39 are left for the name.
KUEUE_LWS_NAME_MAX: Final = 39

# Volcano.
VOLCANO_QUEUE_ANNOTATION: Final = "scheduling.volcano.sh/queue-name"
VOLCANO_GROUP_ANNOTATION: Final = "scheduling.k8s.io/group-name"
VOLCANO_JOB_GROUP_ANNOTATION: Final = "scheduling.volcano.sh/group-name"
VOLCANO_DEFAULT_QUEUE: Final = "default"
VOLCANO_PODGROUP_API: Final = "scheduling.volcano.sh/v1beta1"

# scheduler-plugins Coscheduling.
COSCHEDULING_POD_GROUP_LABEL: Final = "scheduling.x-k8s.io/pod-group"
COSCHEDULING_PODGROUP_API: Final = "scheduling.x-k8s.io/v1alpha1"

# Keys an ML team's pod template may never set for a provider, whether or not
# the cluster's scheduling block sets them: choosing a queue, a gang or a
# scheduler-level priority is the platform's call. Prefixes end with "/".
RESERVED_KEYS: Final[dict[str, tuple[str, ...]]] = {
    DEFAULT: (),
    KAI: (
        "kai.scheduler/",
        KAI_LEGACY_QUEUE_LABEL,
        KAI_PRIORITY_LABEL,
        KAI_POD_GROUP_ANNOTATION,
    ),
    KUEUE: ("kueue.x-k8s.io/",),
    VOLCANO: ("scheduling.volcano.sh/", "volcano.sh/", VOLCANO_GROUP_ANNOTATION),
    COSCHEDULING: ("scheduling.x-k8s.io/",),
}

# Keys that join a pod to a gang. Modelplane or the scheduler manages them, so a
# platform's defaultLabels/defaultAnnotations may not set them either.
GANG_KEYS: Final[dict[str, tuple[str, ...]]] = {
    DEFAULT: (),
    KAI: (KAI_POD_GROUP_ANNOTATION, KAI_SKIP_PODGROUPER),
    KUEUE: (KUEUE_POD_GROUP_LABEL, KUEUE_POD_GROUP_COUNT),
    VOLCANO: (VOLCANO_GROUP_ANNOTATION, VOLCANO_JOB_GROUP_ANNOTATION),
    COSCHEDULING: (COSCHEDULING_POD_GROUP_LABEL,),
}


def is_reserved(provider: str, key: str) -> bool:
    for entry in RESERVED_KEYS.get(provider, ()):
        if (entry.endswith("/") and key.startswith(entry)) or key == entry:
            return True
    return False
