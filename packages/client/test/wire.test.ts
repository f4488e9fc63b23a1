// The client's own copies of the wire types are exactly core's: a change to either fails the type check.
import type { MessageLog, Messages, Suppressions, Wire } from "@mailroom/core"
import { assert, it } from "vitest"
import type { MailroomClient } from "../src/index.js"

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false

const same: {
  readonly sendRequest: Equals<MailroomClient.SendEmailRequest, Wire.SendEmailRequest>
  readonly sendResponse: Equals<MailroomClient.SendEmailResponse, Wire.SendEmailResponse>
  readonly scheduled: Equals<MailroomClient.ScheduledEmailResponse, Wire.ScheduledEmailResponse>
  readonly reschedule: Equals<MailroomClient.RescheduleRequest, typeof Wire.RescheduleRequest.Encoded>
  readonly cancel: Equals<MailroomClient.CancelResponse, Wire.CancelResponse>
  readonly batch: Equals<MailroomClient.SendBatchResponse, Wire.SendBatchResponse>
  readonly presignRequest: Equals<MailroomClient.PresignRequest, Wire.PresignRequest>
  readonly presignResponse: Equals<MailroomClient.PresignResponse, Wire.PresignResponse>
  readonly download: Equals<MailroomClient.DownloadResponse, Wire.DownloadResponse>
  readonly deleteByKey: Equals<MailroomClient.DeleteByKeyResponse, Wire.DeleteByKeyResponse>
  readonly deleteById: Equals<MailroomClient.DeleteByIdResponse, Wire.DeleteByIdResponse>
  readonly status: Equals<MailroomClient.EmailStatus, MessageLog.State>
  readonly emailRecord: Equals<MailroomClient.EmailRecord, MessageLog.EmailRecord>
  readonly emailDetail: Equals<MailroomClient.EmailDetail, MessageLog.EmailDetail>
  readonly emailList: Equals<MailroomClient.EmailList, Wire.EmailList>
  readonly listEmails: Equals<MailroomClient.ListEmailsQuery, Messages.ListEmailsRequest>
  readonly suppression: Equals<MailroomClient.Suppression, Suppressions.Suppression>
  readonly suppressionList: Equals<MailroomClient.SuppressionList, Wire.SuppressionList>
  readonly listSuppressions: Equals<MailroomClient.ListSuppressionsQuery, Messages.ListSuppressionsRequest>
  readonly suppressRequest: Equals<MailroomClient.SuppressRequest, typeof Wire.SuppressRequest.Encoded>
  readonly unsuppress: Equals<MailroomClient.UnsuppressResponse, Wire.UnsuppressResponse>
} = {
  sendRequest: true,
  sendResponse: true,
  scheduled: true,
  reschedule: true,
  cancel: true,
  batch: true,
  presignRequest: true,
  presignResponse: true,
  download: true,
  deleteByKey: true,
  deleteById: true,
  status: true,
  emailRecord: true,
  emailDetail: true,
  emailList: true,
  listEmails: true,
  suppression: true,
  suppressionList: true,
  listSuppressions: true,
  suppressRequest: true,
  unsuppress: true
}

it("the client's wire types are core's (checked by tsc)", () => {
  assert.isTrue(Object.values(same).every(Boolean))
})
