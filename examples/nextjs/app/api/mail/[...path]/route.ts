// app/api/mail/[...path]/route.ts: every mailroom route under /api/mail, through the Web handler.
// Next.js parses nothing here: the Request's body reaches mailroom as sent.
import { mailroom } from "../../../../lib/mailroom.js"

export const runtime = "nodejs" // the Node.js runtime: the adapters use Node APIs
export const dynamic = "force-dynamic"

export const GET = mailroom.web
export const POST = mailroom.web
export const PUT = mailroom.web
export const DELETE = mailroom.web
