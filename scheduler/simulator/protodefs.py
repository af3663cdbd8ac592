# ruff: noqa: E501
"""The built-in kinds' protobuf field numbers (generated data; do not edit by hand), split from ``apidefs``
(the OpenAPI v3 schemas), which re-exports ``proto_fields``: the two tables come from different sources
and change for different reasons, and together they made one file of over 900 lines.

- ``_PROTO``: for each Go type, its fields' protobuf numbers, from k8s.io/api's ``protobuf:`` struct tags:
  ``name=N`` (``*``: a pointer, present on the wire even when zero; ``!``: no ``omitempty``, kept in JSON
  even when zero) and ``+N:Type`` for an embedded struct that JSON inlines but protobuf nests (``Volume``'s
  ``VolumeSource``). ``protobuf.py`` decodes request bodies with it, and reads each message's field types
  from ``apidefs.schemas()``: only the numbers live here.

It is parsed once, on first use.
"""

from __future__ import annotations

import functools

__all__ = ["proto_fields"]

_PROTO = """
io.k8s.api.apps.v1.ControllerRevision metadata=1 data=2! revision=3!
io.k8s.api.apps.v1.ControllerRevisionList metadata=1 items=2!
io.k8s.api.apps.v1.DaemonSet metadata=1 spec=2 status=3
io.k8s.api.apps.v1.DaemonSetCondition type=1! status=2! lastTransitionTime=3 reason=4 message=5
io.k8s.api.apps.v1.DaemonSetList metadata=1 items=2!
io.k8s.api.apps.v1.DaemonSetSpec selector=1*! template=2! updateStrategy=3 minReadySeconds=4 revisionHistoryLimit=6*
io.k8s.api.apps.v1.DaemonSetStatus currentNumberScheduled=1! numberMisscheduled=2! desiredNumberScheduled=3! numberReady=4! observedGeneration=5 updatedNumberScheduled=6 numberAvailable=7 numberUnavailable=8 collisionCount=9* conditions=10
io.k8s.api.apps.v1.DaemonSetUpdateStrategy type=1 rollingUpdate=2*
io.k8s.api.apps.v1.Deployment metadata=1 spec=2 status=3
io.k8s.api.apps.v1.DeploymentCondition type=1! status=2! reason=4 message=5 lastUpdateTime=6 lastTransitionTime=7
io.k8s.api.apps.v1.DeploymentList metadata=1 items=2!
io.k8s.api.apps.v1.DeploymentSpec replicas=1* selector=2*! template=3! strategy=4 minReadySeconds=5 revisionHistoryLimit=6* paused=7 progressDeadlineSeconds=9*
io.k8s.api.apps.v1.DeploymentStatus observedGeneration=1 replicas=2 updatedReplicas=3 availableReplicas=4 unavailableReplicas=5 conditions=6 readyReplicas=7 collisionCount=8* terminatingReplicas=9*
io.k8s.api.apps.v1.DeploymentStrategy type=1 rollingUpdate=2*
io.k8s.api.apps.v1.ReplicaSet metadata=1 spec=2 status=3
io.k8s.api.apps.v1.ReplicaSetCondition type=1! status=2! lastTransitionTime=3 reason=4 message=5
io.k8s.api.apps.v1.ReplicaSetList metadata=1 items=2!
io.k8s.api.apps.v1.ReplicaSetSpec replicas=1* selector=2*! template=3 minReadySeconds=4
io.k8s.api.apps.v1.ReplicaSetStatus replicas=1! fullyLabeledReplicas=2 observedGeneration=3 readyReplicas=4 availableReplicas=5 conditions=6 terminatingReplicas=7*
io.k8s.api.apps.v1.RollingUpdateDaemonSet maxUnavailable=1* maxSurge=2*
io.k8s.api.apps.v1.RollingUpdateDeployment maxUnavailable=1* maxSurge=2*
io.k8s.api.apps.v1.RollingUpdateStatefulSetStrategy partition=1* maxUnavailable=2*
io.k8s.api.apps.v1.StatefulSet metadata=1 spec=2 status=3
io.k8s.api.apps.v1.StatefulSetCondition type=1! status=2! lastTransitionTime=3 reason=4 message=5
io.k8s.api.apps.v1.StatefulSetList metadata=1 items=2!
io.k8s.api.apps.v1.StatefulSetOrdinals start=1!
io.k8s.api.apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy whenDeleted=1 whenScaled=2
io.k8s.api.apps.v1.StatefulSetSpec replicas=1* selector=2*! template=3! volumeClaimTemplates=4 serviceName=5! podManagementPolicy=6 updateStrategy=7 revisionHistoryLimit=8* minReadySeconds=9 persistentVolumeClaimRetentionPolicy=10* ordinals=11*
io.k8s.api.apps.v1.StatefulSetStatus observedGeneration=1 replicas=2! readyReplicas=3 currentReplicas=4 updatedReplicas=5 currentRevision=6 updateRevision=7 collisionCount=9* conditions=10 availableReplicas=11!
io.k8s.api.apps.v1.StatefulSetUpdateStrategy type=1 rollingUpdate=2*
io.k8s.api.authentication.v1.BoundObjectReference kind=1 apiVersion=2 name=3 uid=4
io.k8s.api.authentication.v1.SelfSubjectReview metadata=1 status=2
io.k8s.api.authentication.v1.SelfSubjectReviewStatus userInfo=1
io.k8s.api.authentication.v1.TokenRequest metadata=1 spec=2! status=3
io.k8s.api.authentication.v1.TokenRequestSpec audiences=1! boundObjectRef=3*! expirationSeconds=4*! attestations=5
io.k8s.api.authentication.v1.TokenRequestStatus token=1! expirationTimestamp=2!
io.k8s.api.authentication.v1.TokenReview metadata=1 spec=2! status=3
io.k8s.api.authentication.v1.TokenReviewSpec token=1 audiences=2
io.k8s.api.authentication.v1.TokenReviewStatus authenticated=1 user=2 error=3 audiences=4
io.k8s.api.authentication.v1.UserInfo username=1 uid=2 groups=3 extra=4
io.k8s.api.authorization.v1.FieldSelectorAttributes rawSelector=1 requirements=2
io.k8s.api.authorization.v1.LabelSelectorAttributes rawSelector=1 requirements=2
io.k8s.api.authorization.v1.LocalSubjectAccessReview metadata=1 spec=2! status=3
io.k8s.api.authorization.v1.NonResourceAttributes path=1 verb=2
io.k8s.api.authorization.v1.NonResourceRule verbs=1! nonResourceURLs=2
io.k8s.api.authorization.v1.ResourceAttributes namespace=1 verb=2 group=3 version=4 resource=5 subresource=6 name=7 fieldSelector=8* labelSelector=9*
io.k8s.api.authorization.v1.ResourceRule verbs=1! apiGroups=2 resources=3 resourceNames=4
io.k8s.api.authorization.v1.SelfSubjectAccessReview metadata=1 spec=2! status=3
io.k8s.api.authorization.v1.SelfSubjectAccessReviewSpec resourceAttributes=1* nonResourceAttributes=2*
io.k8s.api.authorization.v1.SelfSubjectRulesReview metadata=1 spec=2! status=3
io.k8s.api.authorization.v1.SelfSubjectRulesReviewSpec namespace=1
io.k8s.api.authorization.v1.SubjectAccessReview metadata=1 spec=2! status=3
io.k8s.api.authorization.v1.SubjectAccessReviewSpec resourceAttributes=1* nonResourceAttributes=2* user=3 groups=4 extra=5 uid=6
io.k8s.api.authorization.v1.SubjectAccessReviewStatus allowed=1! reason=2 evaluationError=3 denied=4
io.k8s.api.authorization.v1.SubjectRulesReviewStatus resourceRules=1! nonResourceRules=2! incomplete=3! evaluationError=4
io.k8s.api.autoscaling.v1.Scale metadata=1 spec=2 status=3
io.k8s.api.autoscaling.v1.ScaleSpec replicas=1
io.k8s.api.autoscaling.v1.ScaleStatus replicas=1! selector=2
io.k8s.api.batch.v1.CronJob metadata=1 spec=2 status=3
io.k8s.api.batch.v1.CronJobList metadata=1 items=2!
io.k8s.api.batch.v1.CronJobSpec schedule=1! startingDeadlineSeconds=2* concurrencyPolicy=3 suspend=4* jobTemplate=5! successfulJobsHistoryLimit=6* failedJobsHistoryLimit=7* timeZone=8*
io.k8s.api.batch.v1.CronJobStatus active=1 lastScheduleTime=4* lastSuccessfulTime=5*
io.k8s.api.batch.v1.Job metadata=1 spec=2 status=3
io.k8s.api.batch.v1.JobCondition type=1! status=2! lastProbeTime=3 lastTransitionTime=4 reason=5 message=6
io.k8s.api.batch.v1.JobList metadata=1 items=2!
io.k8s.api.batch.v1.JobSchedulingConfiguration schedulingPolicy=1* schedulingConstraints=2* disruptionMode=3* resourceClaims=4
io.k8s.api.batch.v1.JobSpec parallelism=1* completions=2* activeDeadlineSeconds=3* selector=4* manualSelector=5* template=6! backoffLimit=7* ttlSecondsAfterFinished=8* completionMode=9* suspend=10* podFailurePolicy=11* backoffLimitPerIndex=12* maxFailedIndexes=13* podReplacementPolicy=14* managedBy=15* successPolicy=16* scheduling=17*
io.k8s.api.batch.v1.JobStatus conditions=1 startTime=2* completionTime=3* active=4 succeeded=5 failed=6 completedIndexes=7 uncountedTerminatedPods=8* ready=9* failedIndexes=10* terminating=11*
io.k8s.api.batch.v1.JobTemplateSpec metadata=1 spec=2
io.k8s.api.batch.v1.PodFailurePolicy rules=1!
io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement containerName=1* operator=2! values=3!
io.k8s.api.batch.v1.PodFailurePolicyOnPodConditionsPattern type=1! status=2!
io.k8s.api.batch.v1.PodFailurePolicyRule action=1! onExitCodes=2* onPodConditions=3
io.k8s.api.batch.v1.SuccessPolicy rules=1!
io.k8s.api.batch.v1.SuccessPolicyRule succeededIndexes=1* succeededCount=2*
io.k8s.api.batch.v1.UncountedTerminatedPods succeeded=1 failed=2
io.k8s.api.coordination.v1.Lease metadata=1 spec=2
io.k8s.api.coordination.v1.LeaseList metadata=1 items=2!
io.k8s.api.coordination.v1.LeaseSpec holderIdentity=1* leaseDurationSeconds=2* acquireTime=3* renewTime=4* leaseTransitions=5* strategy=6* preferredHolder=7*
io.k8s.api.core.v1.AWSElasticBlockStoreVolumeSource volumeID=1! fsType=2 partition=3 readOnly=4
io.k8s.api.core.v1.Affinity nodeAffinity=1* podAffinity=2* podAntiAffinity=3*
io.k8s.api.core.v1.AppArmorProfile type=1! localhostProfile=2*
io.k8s.api.core.v1.AttachedVolume name=1! devicePath=2!
io.k8s.api.core.v1.AzureDiskVolumeSource diskName=1! diskURI=2! cachingMode=3* fsType=4* readOnly=5* kind=6*
io.k8s.api.core.v1.AzureFileVolumeSource secretName=1! shareName=2! readOnly=3
io.k8s.api.core.v1.Binding metadata=1 target=2!
io.k8s.api.core.v1.CSIVolumeSource driver=1! readOnly=2* fsType=3* volumeAttributes=4 nodePublishSecretRef=5*
io.k8s.api.core.v1.Capabilities add=1 drop=2
io.k8s.api.core.v1.CephFSVolumeSource monitors=1! path=2 user=3 secretFile=4 secretRef=5* readOnly=6
io.k8s.api.core.v1.CinderVolumeSource volumeID=1! fsType=2 readOnly=3 secretRef=4*
io.k8s.api.core.v1.ClientIPConfig timeoutSeconds=1*
io.k8s.api.core.v1.ClusterTrustBundleProjection name=1* signerName=2* labelSelector=3* path=4! optional=5* user=6*
io.k8s.api.core.v1.ConfigMap metadata=1 data=2 binaryData=3 immutable=4*
io.k8s.api.core.v1.ConfigMapEnvSource +1:LocalObjectReference optional=2*
io.k8s.api.core.v1.ConfigMapKeySelector +1:LocalObjectReference key=2! optional=3*
io.k8s.api.core.v1.ConfigMapList metadata=1 items=2!
io.k8s.api.core.v1.ConfigMapNodeConfigSource namespace=1! name=2! uid=3 resourceVersion=4 kubeletConfigKey=5!
io.k8s.api.core.v1.ConfigMapProjection +1:LocalObjectReference items=2 optional=4*
io.k8s.api.core.v1.ConfigMapVolumeSource +1:LocalObjectReference items=2 defaultMode=3* optional=4* defaultUser=5*
io.k8s.api.core.v1.Container name=1! image=2 command=3 args=4 workingDir=5 ports=6 env=7 resources=8 volumeMounts=9 livenessProbe=10* readinessProbe=11* lifecycle=12* terminationMessagePath=13 imagePullPolicy=14 securityContext=15* stdin=16 stdinOnce=17 tty=18 envFrom=19 terminationMessagePolicy=20 volumeDevices=21 startupProbe=22* resizePolicy=23 restartPolicy=24* restartPolicyRules=25
io.k8s.api.core.v1.ContainerExtendedResourceRequest containerName=1! resourceName=2! requestName=3!
io.k8s.api.core.v1.ContainerImage names=1! sizeBytes=2
io.k8s.api.core.v1.ContainerPort name=1 hostPort=2 containerPort=3! protocol=4 hostIP=5
io.k8s.api.core.v1.ContainerResizePolicy resourceName=1! restartPolicy=2!
io.k8s.api.core.v1.ContainerRestartRule action=1 exitCodes=2*
io.k8s.api.core.v1.ContainerRestartRuleOnExitCodes operator=1 values=2
io.k8s.api.core.v1.ContainerState waiting=1* running=2* terminated=3*
io.k8s.api.core.v1.ContainerStateRunning startedAt=1
io.k8s.api.core.v1.ContainerStateTerminated exitCode=1! signal=2 reason=3 message=4 startedAt=5 finishedAt=6 containerID=7
io.k8s.api.core.v1.ContainerStateWaiting reason=1 message=2
io.k8s.api.core.v1.ContainerStatus name=1! state=2 lastState=3 ready=4! restartCount=5! image=6! imageID=7! containerID=8 started=9* allocatedResources=10 resources=11* volumeMounts=12 user=13* allocatedResourcesStatus=14 stopSignal=15*
io.k8s.api.core.v1.ContainerUser linux=1*
io.k8s.api.core.v1.DaemonEndpoint Port=1!
io.k8s.api.core.v1.DownwardAPIProjection items=1
io.k8s.api.core.v1.DownwardAPIVolumeFile path=1! fieldRef=2* resourceFieldRef=3* mode=4* user=5*
io.k8s.api.core.v1.DownwardAPIVolumeSource items=1 defaultMode=2* defaultUser=3*
io.k8s.api.core.v1.EmptyDirVolumeSource medium=1 sizeLimit=2* mode=3*
io.k8s.api.core.v1.EndpointAddress ip=1! targetRef=2* hostname=3 nodeName=4*
io.k8s.api.core.v1.EndpointPort name=1 port=2! protocol=3 appProtocol=4*
io.k8s.api.core.v1.EndpointSubset addresses=1 notReadyAddresses=2 ports=3
io.k8s.api.core.v1.Endpoints metadata=1 subsets=2
io.k8s.api.core.v1.EndpointsList metadata=1 items=2!
io.k8s.api.core.v1.EnvFromSource prefix=1 configMapRef=2* secretRef=3*
io.k8s.api.core.v1.EnvVar name=1! value=2 valueFrom=3*
io.k8s.api.core.v1.EnvVarSource fieldRef=1* resourceFieldRef=2* configMapKeyRef=3* secretKeyRef=4* fileKeyRef=5*
io.k8s.api.core.v1.EphemeralContainer +1:EphemeralContainerCommon targetContainerName=2
io.k8s.api.core.v1.EphemeralContainerCommon name=1! image=2 command=3 args=4 workingDir=5 ports=6 env=7 resources=8 volumeMounts=9 livenessProbe=10* readinessProbe=11* lifecycle=12* terminationMessagePath=13 imagePullPolicy=14 securityContext=15* stdin=16 stdinOnce=17 tty=18 envFrom=19 terminationMessagePolicy=20 volumeDevices=21 startupProbe=22* resizePolicy=23 restartPolicy=24* restartPolicyRules=25
io.k8s.api.core.v1.EphemeralVolumeSource volumeClaimTemplate=1*
io.k8s.api.core.v1.Event metadata=1! involvedObject=2! reason=3 message=4 source=5 firstTimestamp=6 lastTimestamp=7 count=8 type=9 eventTime=10 series=11* action=12 related=13* reportingComponent=14! reportingInstance=15!
io.k8s.api.core.v1.EventList metadata=1 items=2!
io.k8s.api.core.v1.EventSeries count=1 lastObservedTime=2
io.k8s.api.core.v1.EventSource component=1 host=2
io.k8s.api.core.v1.EvictionResponder name=1! priority=2*!
io.k8s.api.core.v1.ExecAction command=1
io.k8s.api.core.v1.FCVolumeSource targetWWNs=1 lun=2* fsType=3 readOnly=4 wwids=5
io.k8s.api.core.v1.FileKeySelector volumeName=1! path=2! key=3! optional=4*
io.k8s.api.core.v1.FlexVolumeSource driver=1! fsType=2 secretRef=3* readOnly=4 options=5
io.k8s.api.core.v1.FlockerVolumeSource datasetName=1 datasetUUID=2
io.k8s.api.core.v1.GCEPersistentDiskVolumeSource pdName=1! fsType=2 partition=3 readOnly=4
io.k8s.api.core.v1.GRPCAction port=1! service=2*! mode=3*
io.k8s.api.core.v1.GitRepoVolumeSource repository=1! revision=2 directory=3
io.k8s.api.core.v1.GlusterfsVolumeSource endpoints=1! path=2! readOnly=3
io.k8s.api.core.v1.HTTPGetAction path=1 port=2! host=3 scheme=4 httpHeaders=5 protocol=6*
io.k8s.api.core.v1.HTTPHeader name=1! value=2!
io.k8s.api.core.v1.HostAlias ip=1! hostnames=2
io.k8s.api.core.v1.HostIP ip=1!
io.k8s.api.core.v1.HostPathVolumeSource path=1! type=2*
io.k8s.api.core.v1.ISCSIVolumeSource targetPortal=1! iqn=2! lun=3! iscsiInterface=4 fsType=5 readOnly=6 portals=7 chapAuthDiscovery=8 secretRef=10* chapAuthSession=11 initiatorName=12*
io.k8s.api.core.v1.ImageVolumeSource reference=1 pullPolicy=2
io.k8s.api.core.v1.ImageVolumeStatus imageRef=1
io.k8s.api.core.v1.KeyToPath key=1! path=2! mode=3* user=4*
io.k8s.api.core.v1.Lifecycle postStart=1* preStop=2* stopSignal=3*
io.k8s.api.core.v1.LifecycleHandler exec=1* httpGet=2* tcpSocket=3* sleep=4*
io.k8s.api.core.v1.LimitRange metadata=1 spec=2
io.k8s.api.core.v1.LimitRangeItem type=1! max=2 min=3 default=4 defaultRequest=5 maxLimitRequestRatio=6
io.k8s.api.core.v1.LimitRangeList metadata=1 items=2!
io.k8s.api.core.v1.LimitRangeSpec limits=1!
io.k8s.api.core.v1.LinuxContainerUser uid=1! gid=2! supplementalGroups=3
io.k8s.api.core.v1.LoadBalancerIngress ip=1 hostname=2 ipMode=3* ports=4
io.k8s.api.core.v1.LoadBalancerStatus ingress=1
io.k8s.api.core.v1.LocalObjectReference name=1
io.k8s.api.core.v1.ModifyVolumeStatus targetVolumeAttributesClassName=1 status=2!
io.k8s.api.core.v1.NFSVolumeSource server=1! path=2! readOnly=3
io.k8s.api.core.v1.Namespace metadata=1 spec=2 status=3
io.k8s.api.core.v1.NamespaceCondition type=1! status=2! lastTransitionTime=4 reason=5 message=6
io.k8s.api.core.v1.NamespaceList metadata=1 items=2!
io.k8s.api.core.v1.NamespaceSpec finalizers=1
io.k8s.api.core.v1.NamespaceStatus phase=1 conditions=2
io.k8s.api.core.v1.Node metadata=1 spec=2 status=3
io.k8s.api.core.v1.NodeAddress type=1! address=2!
io.k8s.api.core.v1.NodeAffinity requiredDuringSchedulingIgnoredDuringExecution=1* preferredDuringSchedulingIgnoredDuringExecution=2
io.k8s.api.core.v1.NodeAllocatableMappedResources name=1! quantity=2*!
io.k8s.api.core.v1.NodeAllocatableOverheadResources name=1! perPod=2* perContainer=3*
io.k8s.api.core.v1.NodeAllocatableResourceClaimStatus resourceClaimName=1! containers=2 mapping=4 overhead=5
io.k8s.api.core.v1.NodeCondition type=1! status=2! lastHeartbeatTime=3 lastTransitionTime=4 reason=5 message=6
io.k8s.api.core.v1.NodeConfigSource configMap=2*
io.k8s.api.core.v1.NodeConfigStatus assigned=1* active=2* lastKnownGood=3* error=4
io.k8s.api.core.v1.NodeDaemonEndpoints kubeletEndpoint=1
io.k8s.api.core.v1.NodeFeatures supplementalGroupsPolicy=1*
io.k8s.api.core.v1.NodeList metadata=1 items=2!
io.k8s.api.core.v1.NodePodPreemptionPolicy disableResizePreemption=1
io.k8s.api.core.v1.NodeRuntimeHandler name=1! features=2*
io.k8s.api.core.v1.NodeRuntimeHandlerFeatures recursiveReadOnlyMounts=1* userNamespaces=2*
io.k8s.api.core.v1.NodeSelector nodeSelectorTerms=1!
io.k8s.api.core.v1.NodeSelectorRequirement key=1! operator=2! values=3
io.k8s.api.core.v1.NodeSelectorTerm matchExpressions=1 matchFields=2
io.k8s.api.core.v1.NodeSpec podCIDR=1 externalID=2 providerID=3 unschedulable=4 taints=5 configSource=6* podCIDRs=7 podPreemptionPolicy=8*
io.k8s.api.core.v1.NodeStatus capacity=1 allocatable=2 phase=3 conditions=4 addresses=5 daemonEndpoints=6 nodeInfo=7 images=8 volumesInUse=9 volumesAttached=10 config=11* runtimeHandlers=12 features=13* declaredFeatures=14
io.k8s.api.core.v1.NodeSwapStatus capacity=1*
io.k8s.api.core.v1.NodeSystemInfo machineID=1! systemUUID=2! bootID=3! kernelVersion=4! osImage=5! containerRuntimeVersion=6! kubeletVersion=7! kubeProxyVersion=8! operatingSystem=9! architecture=10! swap=11*
io.k8s.api.core.v1.ObjectFieldSelector apiVersion=1 fieldPath=2!
io.k8s.api.core.v1.ObjectReference kind=1 namespace=2 name=3 uid=4 apiVersion=5 resourceVersion=6 fieldPath=7
io.k8s.api.core.v1.PersistentVolumeClaim metadata=1 spec=2 status=3
io.k8s.api.core.v1.PersistentVolumeClaimCondition type=1! status=2! lastProbeTime=3 lastTransitionTime=4 reason=5 message=6
io.k8s.api.core.v1.PersistentVolumeClaimSpec accessModes=1 resources=2 volumeName=3 selector=4* storageClassName=5* volumeMode=6* dataSource=7* dataSourceRef=8* volumeAttributesClassName=9*
io.k8s.api.core.v1.PersistentVolumeClaimStatus phase=1 accessModes=2 capacity=3 conditions=4 allocatedResources=5 allocatedResourceStatuses=7 currentVolumeAttributesClassName=8* modifyVolumeStatus=9* healthStatus=10*
io.k8s.api.core.v1.PersistentVolumeClaimTemplate metadata=1 spec=2!
io.k8s.api.core.v1.PersistentVolumeClaimVolumeSource claimName=1! readOnly=2
io.k8s.api.core.v1.PhotonPersistentDiskVolumeSource pdID=1! fsType=2
io.k8s.api.core.v1.Pod metadata=1 spec=2 status=3
io.k8s.api.core.v1.PodAffinity requiredDuringSchedulingIgnoredDuringExecution=1 preferredDuringSchedulingIgnoredDuringExecution=2
io.k8s.api.core.v1.PodAffinityTerm labelSelector=1* namespaces=2 topologyKey=3! namespaceSelector=4* matchLabelKeys=5 mismatchLabelKeys=6
io.k8s.api.core.v1.PodAntiAffinity requiredDuringSchedulingIgnoredDuringExecution=1 preferredDuringSchedulingIgnoredDuringExecution=2
io.k8s.api.core.v1.PodCertificateProjection signerName=1 keyType=2 maxExpirationSeconds=3* credentialBundlePath=4 keyPath=5 certificateChainPath=6 userAnnotations=7 user=8*
io.k8s.api.core.v1.PodCondition type=1! status=2! lastProbeTime=3 lastTransitionTime=4 reason=5 message=6 observedGeneration=7
io.k8s.api.core.v1.PodDNSConfig nameservers=1 searches=2 options=3
io.k8s.api.core.v1.PodDNSConfigOption name=1 value=2*
io.k8s.api.core.v1.PodExtendedResourceClaimStatus requestMappings=1! resourceClaimName=2!
io.k8s.api.core.v1.PodIP ip=1!
io.k8s.api.core.v1.PodList metadata=1 items=2!
io.k8s.api.core.v1.PodOS name=1!
io.k8s.api.core.v1.PodReadinessGate conditionType=1!
io.k8s.api.core.v1.PodResourceClaim name=1! resourceClaimName=3* resourceClaimTemplateName=4*
io.k8s.api.core.v1.PodResourceClaimStatus name=1! resourceClaimName=2*
io.k8s.api.core.v1.PodSchedulingGate name=1!
io.k8s.api.core.v1.PodSchedulingGroup podGroupName=1*
io.k8s.api.core.v1.PodSecurityContext seLinuxOptions=1* runAsUser=2* runAsNonRoot=3* supplementalGroups=4 fsGroup=5* runAsGroup=6* sysctls=7 windowsOptions=8* fsGroupChangePolicy=9* seccompProfile=10* appArmorProfile=11* supplementalGroupsPolicy=12* seLinuxChangePolicy=13*
io.k8s.api.core.v1.PodSpec volumes=1 containers=2! restartPolicy=3 terminationGracePeriodSeconds=4* activeDeadlineSeconds=5* dnsPolicy=6 nodeSelector=7 serviceAccountName=8 serviceAccount=9 nodeName=10 hostNetwork=11 hostPID=12 hostIPC=13 securityContext=14* imagePullSecrets=15 hostname=16 subdomain=17 affinity=18* schedulerName=19 initContainers=20 automountServiceAccountToken=21* tolerations=22 hostAliases=23 priorityClassName=24 priority=25* dnsConfig=26* shareProcessNamespace=27* readinessGates=28 runtimeClassName=29* enableServiceLinks=30* preemptionPolicy=31* overhead=32 topologySpreadConstraints=33 ephemeralContainers=34 setHostnameAsFQDN=35* os=36* hostUsers=37* schedulingGates=38 resourceClaims=39 resources=40* hostnameOverride=41* schedulingGroup=43* evictionResponders=44
io.k8s.api.core.v1.PodStatus phase=1 conditions=2 message=3 reason=4 hostIP=5 podIP=6 startTime=7* containerStatuses=8 qosClass=9 initContainerStatuses=10 nominatedNodeName=11 podIPs=12 ephemeralContainerStatuses=13 resize=14 resourceClaimStatuses=15 hostIPs=16 observedGeneration=17 extendedResourceClaimStatus=18* allocatedResources=19 resources=20* nodeAllocatableResourceClaimStatuses=21 volumeHealth=22
io.k8s.api.core.v1.PodTemplateSpec metadata=1 spec=2
io.k8s.api.core.v1.PodVolumeHealth name=1! healthConditions=2 lastTransitionTime=3
io.k8s.api.core.v1.PortStatus port=1! protocol=2! error=3*
io.k8s.api.core.v1.PortworxVolumeSource volumeID=1! fsType=2 readOnly=3
io.k8s.api.core.v1.PreferredSchedulingTerm weight=1! preference=2!
io.k8s.api.core.v1.Probe +1:ProbeHandler initialDelaySeconds=2 timeoutSeconds=3 periodSeconds=4 successThreshold=5 failureThreshold=6 terminationGracePeriodSeconds=7*
io.k8s.api.core.v1.ProbeHandler exec=1* httpGet=2* tcpSocket=3* grpc=4*
io.k8s.api.core.v1.ProjectedVolumeSource sources=1! defaultMode=2* defaultUser=3*
io.k8s.api.core.v1.QuobyteVolumeSource registry=1! volume=2! readOnly=3 user=4 group=5 tenant=6
io.k8s.api.core.v1.RBDVolumeSource monitors=1! image=2! fsType=3 pool=4 user=5 keyring=6 secretRef=7* readOnly=8
io.k8s.api.core.v1.ReplicationController metadata=1 spec=2 status=3
io.k8s.api.core.v1.ReplicationControllerCondition type=1! status=2! lastTransitionTime=3 reason=4 message=5
io.k8s.api.core.v1.ReplicationControllerList metadata=1 items=2!
io.k8s.api.core.v1.ReplicationControllerSpec replicas=1* selector=2 template=3* minReadySeconds=4
io.k8s.api.core.v1.ReplicationControllerStatus replicas=1! fullyLabeledReplicas=2 observedGeneration=3 readyReplicas=4 availableReplicas=5 conditions=6
io.k8s.api.core.v1.ResourceClaim name=1! request=2
io.k8s.api.core.v1.ResourceFieldSelector containerName=1 resource=2! divisor=3
io.k8s.api.core.v1.ResourceHealth resourceID=1! health=2 message=6*
io.k8s.api.core.v1.ResourceQuota metadata=1 spec=2 status=3
io.k8s.api.core.v1.ResourceQuotaList metadata=1 items=2!
io.k8s.api.core.v1.ResourceQuotaSpec hard=1 scopes=2 scopeSelector=3*
io.k8s.api.core.v1.ResourceQuotaStatus hard=1 used=2
io.k8s.api.core.v1.ResourceRequirements limits=1 requests=2 claims=3
io.k8s.api.core.v1.ResourceStatus name=1! resources=2
io.k8s.api.core.v1.SELinuxOptions user=1 role=2 type=3 level=4
io.k8s.api.core.v1.ScaleIOVolumeSource gateway=1! system=2! secretRef=3*! sslEnabled=4 protectionDomain=5 storagePool=6 storageMode=7 volumeName=8 fsType=9 readOnly=10
io.k8s.api.core.v1.ScopeSelector matchExpressions=1
io.k8s.api.core.v1.ScopedResourceSelectorRequirement scopeName=1! operator=2! values=3
io.k8s.api.core.v1.SeccompProfile type=1! localhostProfile=2*
io.k8s.api.core.v1.Secret metadata=1 data=2 type=3 stringData=4 immutable=5*
io.k8s.api.core.v1.SecretEnvSource +1:LocalObjectReference optional=2*
io.k8s.api.core.v1.SecretKeySelector +1:LocalObjectReference key=2! optional=3*
io.k8s.api.core.v1.SecretList metadata=1 items=2!
io.k8s.api.core.v1.SecretProjection +1:LocalObjectReference items=2 optional=4*
io.k8s.api.core.v1.SecretVolumeSource secretName=1 items=2 defaultMode=3* optional=4* defaultUser=5*
io.k8s.api.core.v1.SecurityContext capabilities=1* privileged=2* seLinuxOptions=3* runAsUser=4* runAsNonRoot=5* readOnlyRootFilesystem=6* allowPrivilegeEscalation=7* runAsGroup=8* procMount=9* windowsOptions=10* seccompProfile=11* appArmorProfile=12*
io.k8s.api.core.v1.Service metadata=1 spec=2 status=3
io.k8s.api.core.v1.ServiceAccount metadata=1 secrets=2 imagePullSecrets=3 automountServiceAccountToken=4*
io.k8s.api.core.v1.ServiceAccountList metadata=1 items=2!
io.k8s.api.core.v1.ServiceAccountTokenProjection audience=1 expirationSeconds=2* path=3! user=4*
io.k8s.api.core.v1.ServiceList metadata=1 items=2!
io.k8s.api.core.v1.ServicePort name=1 protocol=2 port=3! targetPort=4 nodePort=5 appProtocol=6*
io.k8s.api.core.v1.ServiceSpec ports=1 selector=2 clusterIP=3 type=4 externalIPs=5 sessionAffinity=7 loadBalancerIP=8 loadBalancerSourceRanges=9 externalName=10 externalTrafficPolicy=11 healthCheckNodePort=12 publishNotReadyAddresses=13 sessionAffinityConfig=14* ipFamilyPolicy=17* clusterIPs=18 ipFamilies=19 allocateLoadBalancerNodePorts=20* loadBalancerClass=21* internalTrafficPolicy=22* trafficDistribution=23*
io.k8s.api.core.v1.ServiceStatus loadBalancer=1 conditions=2
io.k8s.api.core.v1.SessionAffinityConfig clientIP=1*
io.k8s.api.core.v1.SleepAction seconds=1!
io.k8s.api.core.v1.StorageOSVolumeSource volumeName=1 volumeNamespace=2 fsType=3 readOnly=4 secretRef=5*
io.k8s.api.core.v1.Sysctl name=1! value=2!
io.k8s.api.core.v1.TCPSocketAction port=1! host=2
io.k8s.api.core.v1.Taint key=1! value=2 effect=3! timeAdded=4*
io.k8s.api.core.v1.Toleration key=1 operator=2 value=3 effect=4 tolerationSeconds=5*
io.k8s.api.core.v1.TopologySpreadConstraint maxSkew=1! topologyKey=2! whenUnsatisfiable=3! labelSelector=4* minDomains=5* nodeAffinityPolicy=6* nodeTaintsPolicy=7* matchLabelKeys=8
io.k8s.api.core.v1.TypedLocalObjectReference apiGroup=1*! kind=2! name=3!
io.k8s.api.core.v1.TypedObjectReference apiGroup=1*! kind=2! name=3! namespace=4*
io.k8s.api.core.v1.Volume name=1! +2:VolumeSource
io.k8s.api.core.v1.VolumeDevice name=1! devicePath=2!
io.k8s.api.core.v1.VolumeHealthCondition status=1! reason=2! message=3
io.k8s.api.core.v1.VolumeHealthStatus healthConditions=1 lastTransitionTime=2
io.k8s.api.core.v1.VolumeMount name=1! readOnly=2 mountPath=3! subPath=4 mountPropagation=5* subPathExpr=6 recursiveReadOnly=7* bindMountOptions=8
io.k8s.api.core.v1.VolumeMountStatus name=1! mountPath=2! readOnly=3 recursiveReadOnly=4* volumeStatus=5*
io.k8s.api.core.v1.VolumeProjection secret=1* downwardAPI=2* configMap=3* serviceAccountToken=4* clusterTrustBundle=5* podCertificate=6*
io.k8s.api.core.v1.VolumeResourceRequirements limits=1 requests=2
io.k8s.api.core.v1.VolumeSource hostPath=1* emptyDir=2* gcePersistentDisk=3* awsElasticBlockStore=4* gitRepo=5* secret=6* nfs=7* iscsi=8* glusterfs=9* persistentVolumeClaim=10* rbd=11* flexVolume=12* cinder=13* cephfs=14* flocker=15* downwardAPI=16* fc=17* azureFile=18* configMap=19* vsphereVolume=20* quobyte=21* azureDisk=22* photonPersistentDisk=23* portworxVolume=24* scaleIO=25* projected=26* storageos=27* csi=28* ephemeral=29* image=30*
io.k8s.api.core.v1.VolumeStatus image=1*
io.k8s.api.core.v1.VsphereVirtualDiskVolumeSource volumePath=1! fsType=2 storagePolicyName=3 storagePolicyID=4
io.k8s.api.core.v1.WeightedPodAffinityTerm weight=1! podAffinityTerm=2!
io.k8s.api.core.v1.WindowsSecurityContextOptions gmsaCredentialSpecName=1* gmsaCredentialSpec=2* runAsUserName=3* hostProcess=4*
io.k8s.api.discovery.v1.Endpoint addresses=1! conditions=2 hostname=3* targetRef=4* deprecatedTopology=5 nodeName=6* zone=7* hints=8*
io.k8s.api.discovery.v1.EndpointConditions ready=1* serving=2* terminating=3*
io.k8s.api.discovery.v1.EndpointHints forZones=1 forNodes=2
io.k8s.api.discovery.v1.EndpointPort name=1* protocol=2* port=3* appProtocol=4*
io.k8s.api.discovery.v1.EndpointSlice metadata=1 endpoints=2! ports=3 addressType=4!
io.k8s.api.discovery.v1.EndpointSliceList metadata=1 items=2!
io.k8s.api.discovery.v1.ForNode name=1!
io.k8s.api.discovery.v1.ForZone name=1!
io.k8s.api.events.v1.Event metadata=1! eventTime=2! series=3* reportingController=4 reportingInstance=5 action=6 reason=7 regarding=8 related=9* note=10 type=11 deprecatedSource=12 deprecatedFirstTimestamp=13 deprecatedLastTimestamp=14 deprecatedCount=15
io.k8s.api.events.v1.EventList metadata=1 items=2!
io.k8s.api.events.v1.EventSeries count=1! lastObservedTime=2!
io.k8s.api.policy.v1.Eviction metadata=1 deleteOptions=2*
io.k8s.api.policy.v1.PodDisruptionBudget metadata=1 spec=2 status=3
io.k8s.api.policy.v1.PodDisruptionBudgetList metadata=1 items=2!
io.k8s.api.policy.v1.PodDisruptionBudgetSpec minAvailable=1* selector=2* maxUnavailable=3* unhealthyPodEvictionPolicy=4*
io.k8s.api.policy.v1.PodDisruptionBudgetStatus observedGeneration=1 disruptedPods=2 disruptionsAllowed=3! currentHealthy=4! desiredHealthy=5! expectedPods=6! conditions=7
io.k8s.api.rbac.v1.AggregationRule clusterRoleSelectors=1
io.k8s.api.rbac.v1.ClusterRole metadata=1 rules=2! aggregationRule=3*
io.k8s.api.rbac.v1.ClusterRoleBinding metadata=1 subjects=2 roleRef=3!
io.k8s.api.rbac.v1.ClusterRoleBindingList metadata=1 items=2!
io.k8s.api.rbac.v1.ClusterRoleList metadata=1 items=2!
io.k8s.api.rbac.v1.PolicyRule verbs=1! apiGroups=2 resources=3 resourceNames=4 nonResourceURLs=5
io.k8s.api.rbac.v1.Role metadata=1 rules=2!
io.k8s.api.rbac.v1.RoleBinding metadata=1 subjects=2 roleRef=3!
io.k8s.api.rbac.v1.RoleBindingList metadata=1 items=2!
io.k8s.api.rbac.v1.RoleList metadata=1 items=2!
io.k8s.api.rbac.v1.RoleRef apiGroup=1! kind=2! name=3!
io.k8s.api.rbac.v1.Subject kind=1! apiGroup=2 name=3! namespace=4
io.k8s.api.scheduling.v1.PriorityClass metadata=1 value=2! globalDefault=3 description=4 preemptionPolicy=5*
io.k8s.api.scheduling.v1.PriorityClassList metadata=1 items=2!
io.k8s.api.scheduling.v1alpha3.TopologyConstraint key=1!
io.k8s.api.scheduling.v1alpha3.WorkloadPodGroupDisruptionMode single=1* all=2*
io.k8s.api.scheduling.v1alpha3.WorkloadPodGroupGangSchedulingPolicy minCount=1*
io.k8s.api.scheduling.v1alpha3.WorkloadPodGroupResourceClaim name=1! resourceClaimName=2* resourceClaimTemplateName=3*
io.k8s.api.scheduling.v1alpha3.WorkloadPodGroupSchedulingConstraints topology=1
io.k8s.api.scheduling.v1alpha3.WorkloadPodGroupSchedulingPolicy basic=1* gang=2*
io.k8s.api.scheduling.v1beta1.CompositeDisruptionMode single=1* all=2*
io.k8s.api.scheduling.v1beta1.CompositeGangSchedulingPolicy minGroupCount=1!
io.k8s.api.scheduling.v1beta1.CompositePodGroupSchedulingConstraints topology=1
io.k8s.api.scheduling.v1beta1.CompositePodGroupSchedulingPolicy basic=1* gang=2*
io.k8s.api.scheduling.v1beta1.CompositePodGroupTemplate name=1! schedulingPolicy=2! schedulingConstraints=3* disruptionMode=4* priorityClassName=5 priority=6* preemptionPolicy=7* podGroupTemplates=8 compositePodGroupTemplates=9
io.k8s.api.scheduling.v1beta1.DisruptionMode single=1* all=2*
io.k8s.api.scheduling.v1beta1.GangSchedulingPolicy minCount=1!
io.k8s.api.scheduling.v1beta1.PodGroup metadata=1 spec=2! status=3
io.k8s.api.scheduling.v1beta1.PodGroupList metadata=1 items=2!
io.k8s.api.scheduling.v1beta1.PodGroupResourceClaim name=1! resourceClaimName=2* resourceClaimTemplateName=3*
io.k8s.api.scheduling.v1beta1.PodGroupResourceClaimStatus name=1! resourceClaimName=2*
io.k8s.api.scheduling.v1beta1.PodGroupSchedulingConstraints topology=1
io.k8s.api.scheduling.v1beta1.PodGroupSchedulingPolicy basic=1* gang=2*
io.k8s.api.scheduling.v1beta1.PodGroupSpec parentCompositePodGroupName=1* workloadRef=2* schedulingPolicy=3! schedulingConstraints=4* resourceClaims=5 disruptionMode=6* priorityClassName=7 priority=8* preemptionPolicy=9*
io.k8s.api.scheduling.v1beta1.PodGroupStatus conditions=1 resourceClaimStatuses=2
io.k8s.api.scheduling.v1beta1.PodGroupTemplate name=1! schedulingPolicy=2! schedulingConstraints=3*! resourceClaims=4 disruptionMode=5* priorityClassName=6 priority=7* preemptionPolicy=8*
io.k8s.api.scheduling.v1beta1.TopologyConstraint key=1!
io.k8s.api.scheduling.v1beta1.TypedLocalObjectReference apiGroup=1 kind=2! name=3!
io.k8s.api.scheduling.v1beta1.Workload metadata=1 spec=2!
io.k8s.api.scheduling.v1beta1.WorkloadList metadata=1 items=2!
io.k8s.api.scheduling.v1beta1.WorkloadReference workloadName=1! templateName=2!
io.k8s.api.scheduling.v1beta1.WorkloadSpec controllerRef=1* podGroupTemplates=2! compositePodGroupTemplates=3
io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceColumnDefinition name=1! type=2! format=3 description=4 priority=5 jsonPath=6!
io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceConversion strategy=1! webhook=2*
io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition metadata=1 spec=2! status=3
io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionCondition type=1! status=2! lastTransitionTime=3 reason=4 message=5 observedGeneration=6
io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionList metadata=1 items=2!
io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionNames plural=1! singular=2 shortNames=3 kind=4! listKind=5 categories=6
io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec group=1! names=3! scope=4! versions=7! conversion=9* preserveUnknownFields=10
io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus conditions=1! acceptedNames=2! storedVersions=3! observedGeneration=4
io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionVersion name=1! served=2! storage=3! schema=4* subresources=5* additionalPrinterColumns=6 deprecated=7 deprecationWarning=8* selectableFields=9
io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceSubresourceScale specReplicasPath=1! statusReplicasPath=2! labelSelectorPath=3*
io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceSubresources status=1* scale=2*
io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceValidation openAPIV3Schema=1*
io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ExternalDocumentation description=1 url=2
io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps id=1 $schema=2 $ref=3* description=4 type=5 format=6 title=7 default=8* maximum=9* exclusiveMaximum=10 minimum=11* exclusiveMinimum=12 maxLength=13* minLength=14* pattern=15 maxItems=16* minItems=17* uniqueItems=18 multipleOf=19* enum=20 maxProperties=21* minProperties=22* required=23 items=24* allOf=25 oneOf=26 anyOf=27 not=28* properties=29 additionalProperties=30* patternProperties=31 dependencies=32 additionalItems=33* definitions=34 externalDocs=35* example=36* nullable=37 x-kubernetes-preserve-unknown-fields=38* x-kubernetes-embedded-resource=39 x-kubernetes-int-or-string=40 x-kubernetes-list-map-keys=41 x-kubernetes-list-type=42* x-kubernetes-map-type=43* x-kubernetes-validations=44
io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.SelectableField jsonPath=1!
io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ServiceReference namespace=1! name=2! path=3* port=4*
io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ValidationRule rule=1! message=2 messageExpression=3 reason=4* fieldPath=5 optionalOldSelf=6*
io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.WebhookClientConfig service=1* caBundle=2 url=3*
io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.WebhookConversion clientConfig=2* conversionReviewVersions=3!
io.k8s.apimachinery.pkg.apis.meta.v1.Condition type=1! status=2! observedGeneration=3 lastTransitionTime=4! reason=5! message=6!
io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions gracePeriodSeconds=1* preconditions=2* orphanDependents=3* propagationPolicy=4* dryRun=5 ignoreStoreReadErrorWithClusterBreakingPotential=6*
io.k8s.apimachinery.pkg.apis.meta.v1.FieldSelectorRequirement key=1! operator=2! values=3
io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector matchLabels=1 matchExpressions=2
io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement key=1! operator=2! values=3
io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta selfLink=1 resourceVersion=2 continue=3 remainingItemCount=4* shardInfo=5*
io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry manager=1 operation=2 apiVersion=3 time=4* fieldsType=6 fieldsV1=7* subresource=8
io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta name=1 generateName=2 namespace=3 selfLink=4 uid=5 resourceVersion=6 generation=7 creationTimestamp=8 deletionTimestamp=9* deletionGracePeriodSeconds=10* labels=11 annotations=12 ownerReferences=13 finalizers=14 managedFields=17
io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference kind=1! name=3! uid=4! apiVersion=5! controller=6* blockOwnerDeletion=7*
io.k8s.apimachinery.pkg.apis.meta.v1.Preconditions uid=1* resourceVersion=2*
io.k8s.apimachinery.pkg.apis.meta.v1.ShardInfo selector=1!
io.k8s.apimachinery.pkg.apis.meta.v1.Status metadata=1 status=2 message=3 reason=4 details=5* code=6
io.k8s.apimachinery.pkg.apis.meta.v1.StatusCause reason=1 message=2 field=3
io.k8s.apimachinery.pkg.apis.meta.v1.StatusDetails name=1 group=2 kind=3 causes=4 retryAfterSeconds=5 uid=6
"""


@functools.cache
def proto_fields() -> dict[str, tuple[tuple[int, str, str], ...]]:
    """Go type (as a definition name) → its fields as (number, JSON name or the inlined type's name, flags);
    flags hold ``*`` (pointer), ``!`` (no omitempty) or ``+`` (an inlined embedded struct)."""
    out: dict[str, tuple[tuple[int, str, str], ...]] = {}
    for line in _PROTO.strip().splitlines():
        name, *fields = line.split()
        pkg = name.rpartition(".")[0]
        parsed = []
        for f in fields:
            if f.startswith("+"):
                num, _, typ = f[1:].partition(":")
                parsed.append((int(num), f"{pkg}.{typ}", "+"))
            else:
                key, _, rest = f.partition("=")
                digits = rest.rstrip("*!")
                parsed.append((int(digits), key, rest[len(digits):]))
        out[name] = tuple(parsed)
    return out
