// Layers whose package is imported only when the layer is built: the server loads the adapters its
// config names, not every vendor SDK, so it starts about as fast as a bare Effect program.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** The layer `load` answers, its module imported when the layer is first built. */
export const lazy = <A, E, R>(load: () => Promise<Layer.Layer<A, E, R>>): Layer.Layer<A, E, R> =>
  Layer.unwrap(Effect.promise(load))
