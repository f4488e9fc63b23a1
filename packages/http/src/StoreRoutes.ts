// The seam through which a store that serves its own signed URLs (the local disk store) has them
// answered by the handler. It lives in core, so that a store depends on core alone; re-exported here.
import { StoreRoutes as Core } from "@mailroom/core"

/** What the handler needs of a store that serves its own signed URLs: core's `StoreRoutes.StoreRoutes`. */
export type StoreRoutes = Core.StoreRoutes

/** The service key, core's own: the disk store provides it, the handler reads it when present. */
export const StoreRoutes = Core.StoreRoutes

/** The path the request being served reached the service's base routes at: core's `StoreRoutes.MountPath`. */
export const MountPath = Core.MountPath
