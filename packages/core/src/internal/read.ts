// What every store's `read` runs between learning an object's size and type and reading its bytes.
import * as Effect from "effect/Effect"
import type { ReadOptions } from "../ObjectStore.js"
import { type ObjectInfo, ObjectTooLarge } from "./objectStoreError.js"

/**
 * What a store's `read` runs between learning an object's size and type and reading its bytes:
 * the `maxBytes` check, then `beforeContent`. Stores call it so every one refuses alike.
 */
export const admit = <E>(
  key: string,
  info: ObjectInfo,
  options: ReadOptions<E> | undefined
): Effect.Effect<void, ObjectTooLarge | E> => {
  if (options?.maxBytes !== undefined && info.size > options.maxBytes) {
    return Effect.fail(new ObjectTooLarge({ key, info, maxBytes: options.maxBytes }))
  }
  return options?.beforeContent === undefined ? Effect.void : options.beforeContent(info)
}
