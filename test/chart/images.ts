/**
 * The chart test's images: the images `make images` built, loaded on the local node also under the
 * test registry `folio.test` (as `ctr images tag` would), so that a release with
 * `images.registry: folio.test` runs them — `folio.test/folio/api:<appVersion>` (`folio serve`, or
 * the pod's command: `folio controller`, the `helm test` pod's `node -e …`) and
 * `folio.test/folio/runner:<appVersion>` (`folio runner --pod`). Other registries (the chart's
 * defaults, registry.example.com) are not on the node: their pods stay Pending with ErrImagePull.
 */
import { imageCatalogue } from "../k8s/images.ts";

/** The registry the chart test installs from (images.registry): nothing else is loaded under it. */
export const TEST_REGISTRY = "folio.test";

/** docker/images.txt name → its alias under TEST_REGISTRY. */
export function chartImageAliases(): Record<string, string[]> {
  return Object.fromEntries(imageCatalogue().map((i) => [i.name, [`${TEST_REGISTRY}/${i.ref}`]]));
}
