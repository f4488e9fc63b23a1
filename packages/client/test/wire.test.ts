// The client's own copies of the wire types are exactly core's: a change to either fails the type check.
import type { Wire } from "@mailroom/core"
import { assert, it } from "vitest"
import type { MailroomClient } from "../src/index.js"

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false

const same: {
  readonly sendRequest: Equals<MailroomClient.SendEmailRequest, Wire.SendEmailRequest>
  readonly sendResponse: Equals<MailroomClient.SendEmailResponse, Wire.SendEmailResponse>
  readonly presignRequest: Equals<MailroomClient.PresignRequest, Wire.PresignRequest>
  readonly presignResponse: Equals<MailroomClient.PresignResponse, Wire.PresignResponse>
  readonly download: Equals<MailroomClient.DownloadResponse, Wire.DownloadResponse>
  readonly deleteByKey: Equals<MailroomClient.DeleteByKeyResponse, Wire.DeleteByKeyResponse>
  readonly deleteById: Equals<MailroomClient.DeleteByIdResponse, Wire.DeleteByIdResponse>
} = {
  sendRequest: true,
  sendResponse: true,
  presignRequest: true,
  presignResponse: true,
  download: true,
  deleteByKey: true,
  deleteById: true
}

it("the client's wire types are core's (checked by tsc)", () => {
  assert.isTrue(Object.values(same).every(Boolean))
})
