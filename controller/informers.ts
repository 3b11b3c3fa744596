/**
 * The controller's three informers and the caches the reconciler reads (controller/reconciler.ts):
 * PdfJobs, and the batch Jobs and pods it manages (filtered by the managed-by label). A Job wakes
 * its owner PdfJob through its controller ownerReference, a pod through its folio.dev/pdfjob label.
 */
import { BatchV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig, type V1Job, type V1Pod } from "@kubernetes/client-node";
import { LABELS, MANAGED_BY, PDFJOB_GROUP, PDFJOB_PLURAL, PDFJOB_VERSION, type PdfJob } from "../core/schemas/pdfjob.ts";
import { Informer, type ChangeKind, type ListResult } from "./informer.ts";
import type { Caches } from "./reconciler.ts";

const JOB_NAME_LABEL = "batch.kubernetes.io/job-name";

/** The controller ownerReference's PdfJob name of a Job, if any. */
export function ownerPdfJob(job: V1Job): string | undefined {
  const owner = job.metadata?.ownerReferences?.find((r) => r.controller);
  return owner?.kind === "PdfJob" && owner.apiVersion.startsWith(`${PDFJOB_GROUP}/`) ? owner.name : undefined;
}

const listOf = <T>(res: { items: T[]; metadata?: { resourceVersion?: string } }): ListResult<T> => ({
  items: res.items,
  resourceVersion: res.metadata?.resourceVersion ?? "",
});

export interface ControllerInformers {
  pdfJobs: Informer<PdfJob>;
  jobs: Informer<V1Job>;
  pods: Informer<V1Pod>;
  caches: Caches;
}

/** Builds (does not start) the informers; `onPdfJob` and `enqueue` are how they wake the work queue. */
export function controllerInformers(o: {
  kubeConfig: KubeConfig;
  /** Watch one namespace; all when absent. */
  namespace?: string;
  resyncMs?: number;
  onPdfJob: (pj: PdfJob, kind: ChangeKind) => void;
  enqueue: (key: string | undefined) => void;
  log: (msg: string) => void;
}): ControllerInformers {
  const { enqueue, log } = o;
  const ns = o.namespace;
  const batch = o.kubeConfig.makeApiClient(BatchV1Api);
  const core = o.kubeConfig.makeApiClient(CoreV1Api);
  const custom = o.kubeConfig.makeApiClient(CustomObjectsApi);
  const managed = `${LABELS.managedBy}=${MANAGED_BY}`;
  const crd = { group: PDFJOB_GROUP, version: PDFJOB_VERSION, plural: PDFJOB_PLURAL };
  const nsPath = ns ? `/namespaces/${ns}` : "";

  const pdfJobs = new Informer<PdfJob>({
    name: "pdfjobs",
    kubeConfig: o.kubeConfig,
    list: async () =>
      listOf(
        (await (ns ? custom.listNamespacedCustomObject({ ...crd, namespace: ns }) : custom.listClusterCustomObject(crd))) as {
          items: PdfJob[];
          metadata?: { resourceVersion?: string };
        },
      ),
    watchPath: `/apis/${PDFJOB_GROUP}/${PDFJOB_VERSION}${nsPath}/${PDFJOB_PLURAL}`,
    onChange: o.onPdfJob,
    ...(o.resyncMs === undefined ? {} : { resyncMs: o.resyncMs }),
    log,
  });
  // A Job wakes its owner PdfJob (through the controller ownerReference).
  const jobs = new Informer<V1Job>({
    name: "jobs",
    kubeConfig: o.kubeConfig,
    list: async () =>
      listOf(
        ns
          ? await batch.listNamespacedJob({ namespace: ns, labelSelector: managed })
          : await batch.listJobForAllNamespaces({ labelSelector: managed }),
      ),
    watchPath: `/apis/batch/v1${nsPath}/jobs`,
    labelSelector: managed,
    onChange: (job) => {
      const owner = ownerPdfJob(job);
      if (owner) enqueue(`${job.metadata?.namespace ?? ""}/${owner}`);
    },
    resyncMs: 0,
    log,
  });
  // A pod wakes its PdfJob (its folio.dev/pdfjob label, copied from the Job's template).
  const pods = new Informer<V1Pod>({
    name: "pods",
    kubeConfig: o.kubeConfig,
    list: async () =>
      listOf(
        ns
          ? await core.listNamespacedPod({ namespace: ns, labelSelector: managed })
          : await core.listPodForAllNamespaces({ labelSelector: managed }),
      ),
    watchPath: `/api/v1${nsPath}/pods`,
    labelSelector: managed,
    onChange: (pod) => {
      const owner = pod.metadata?.labels?.[LABELS.pdfJob];
      if (owner) enqueue(`${pod.metadata?.namespace ?? ""}/${owner}`);
    },
    resyncMs: 0,
    log,
  });

  const caches: Caches = {
    pdfJob: (key) => pdfJobs.get(key),
    pdfJobs: () => pdfJobs.list(),
    job: (namespace, name) => jobs.get(`${namespace}/${name}`),
    podsOfJob: (namespace, jobName, jobUid) =>
      pods
        .list()
        .filter(
          (p) =>
            p.metadata?.namespace === namespace &&
            (p.metadata.labels?.[JOB_NAME_LABEL] === jobName ||
              p.metadata.ownerReferences?.some((r) => r.kind === "Job" && (jobUid ? r.uid === jobUid : r.name === jobName))),
        ),
  };
  return { pdfJobs, jobs, pods, caches };
}
