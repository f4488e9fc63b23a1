export interface paths {
    "/emails": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The organisation's messages, newest first, a page at a time
         * @description Bodies and attachment bytes are not stored; sizes and storage keys are.
         */
        get: {
            parameters: {
                query?: {
                    /** @description Rows in the page, 1 to 100 */
                    limit?: number;
                    /** @description The `next_cursor` of the page before */
                    cursor?: string;
                    /** @description The message's status, derived from its recipients */
                    status?: "scheduled" | "sending" | "sent" | "delivery_delayed" | "delivered" | "bounced" | "complained" | "suppressed" | "cancelled" | "failed" | "unknown";
                    /** @description A recipient (to, cc or bcc); the domain compared in any case */
                    to?: string;
                    /** @description `name:value`, a tag the message was sent with */
                    tag?: string;
                    /** @description Created at or after: RFC 3339 with an offset */
                    since?: string;
                    /** @description Created before: RFC 3339 with an offset */
                    until?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description A page; next_cursor is null on the last */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["EmailList"];
                    };
                };
                /** @description A query parameter is invalid, unknown or given twice; each is named */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorsBody"];
                    };
                };
                /** @description Missing, invalid or revoked credential */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description Internal error */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description The credential cannot be checked, or the records reached, right now; nothing was done */
                503: {
                    headers: {
                        /** @description Whole seconds to wait before trying again */
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
            };
        };
        put?: never;
        /** Send an email */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description Same key and body within 24 h replays the first response (Idempotent-Replayed: true) */
                    "Idempotency-Key"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["SendEmailRequest"];
                };
            };
            responses: {
                /** @description Sent */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["SendEmailResponse"];
                    };
                };
                /** @description Scheduled: checked now, sent at scheduled_at (1 second to 30 days ahead) */
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ScheduledEmailResponse"];
                    };
                };
                /** @description Invalid request: one message per problem */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorsBody"];
                    };
                };
                /** @description Missing, invalid or revoked credential */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description Idempotency-Key reused with another body, or still in flight */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description Body too large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description Body is not application/json */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description The sender domain is not verified, or the provider rejected the message */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description Rate limited by the provider */
                429: {
                    headers: {
                        /** @description Whole seconds to wait before trying again */
                        "Retry-After": number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description Internal error */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description Sending is paused, the provider is unavailable or did not confirm the message, or the credential cannot be checked right now */
                503: {
                    headers: {
                        /** @description Whole seconds to wait before trying again */
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["unavailableSendBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/emails/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A message: each recipient's state and its delivery events, oldest first */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The message_id POST /emails answered */
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description The message */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["EmailDetail"];
                    };
                };
                /** @description The id is not valid percent-encoding, or a query parameter was given */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorsBody"];
                    };
                };
                /** @description Missing, invalid or revoked credential */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description No message of this organisation has this id */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description Internal error */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description The credential cannot be checked, or the records reached, right now; nothing was done */
                503: {
                    headers: {
                        /** @description Whole seconds to wait before trying again */
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** Move a scheduled message to another time */
        patch: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The message_id POST /emails answered */
                    id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["RescheduleRequest"];
                };
            };
            responses: {
                /** @description Rescheduled */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ScheduledEmailResponse"];
                    };
                };
                /** @description scheduled_at is missing, malformed, in the past or more than 30 days ahead */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorsBody"];
                    };
                };
                /** @description Missing, invalid or revoked credential */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description No message of this organisation has this id */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description The message has started to send, or is cancelled */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description Body too large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description Body is not application/json */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description Internal error */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description The credential cannot be checked, or the records or the queue reached, right now; nothing was done */
                503: {
                    headers: {
                        /** @description Whole seconds to wait before trying again */
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
            };
        };
        trace?: never;
    };
    "/suppressions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The organisation's suppression list, newest first, a page at a time */
        get: {
            parameters: {
                query?: {
                    /** @description Rows in the page, 1 to 100 */
                    limit?: number;
                    /** @description The `next_cursor` of the page before */
                    cursor?: string;
                    /** @description Why the address is on the list */
                    reason?: "bounced" | "complained" | "manual";
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description A page; next_cursor is null on the last */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["SuppressionList"];
                    };
                };
                /** @description A query parameter is invalid, unknown or given twice */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description Missing, invalid or revoked credential */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description Internal error */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description The credential cannot be checked, or the records reached, right now; nothing was done */
                503: {
                    headers: {
                        /** @description Whole seconds to wait before trying again */
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
            };
        };
        put?: never;
        /**
         * Stop sending to an address
         * @description Sends to it drop it as a recipient (a 422 when no recipient is left). An address on the list already keeps its first entry, which is answered with 200.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["SuppressRequest"];
                };
            };
            responses: {
                /** @description On the list already: the entry kept */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Suppression"];
                    };
                };
                /** @description Added */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Suppression"];
                    };
                };
                /** @description Invalid request */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description Missing, invalid or revoked credential */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description Body too large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description Body is not application/json */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description Internal error */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description The credential cannot be checked, or the records reached, right now; nothing was done */
                503: {
                    headers: {
                        /** @description Whole seconds to wait before trying again */
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/suppressions/{email}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Send to an address again */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The address, percent-encoded (`bob%2Btag%40example.com`) */
                    email: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Removed */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["UnsuppressResponse"];
                    };
                };
                /** @description Not an email address, or not valid percent-encoding */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description Missing, invalid or revoked credential */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description The address is not on the organisation's list */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description Internal error */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description The credential cannot be checked, or the records reached, right now; nothing was done */
                503: {
                    headers: {
                        /** @description Whole seconds to wait before trying again */
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/emails/{id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Cancel a scheduled message
         * @description A message cancelled is never sent; cancelling it again answers the same.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The message_id POST /emails answered */
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Cancelled */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["CancelResponse"];
                    };
                };
                /** @description The id is not valid percent-encoding, or a query parameter was given */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorsBody"];
                    };
                };
                /** @description Missing, invalid or revoked credential */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description No message of this organisation has this id */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description The message has started to send */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description Internal error */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description The credential cannot be checked, or the records or the queue reached, right now; nothing was done */
                503: {
                    headers: {
                        /** @description Whole seconds to wait before trying again */
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/emails/batch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send (or schedule) up to 100 messages, each on its own
         * @description Each item is checked and sent as `POST /emails` would, a few at a time, under the same rate limits. Accepted items are listed in `data`, refused ones in `errors`, each by its index. 200 when any item was accepted, 400 with the same body when none was, 503 when the provider took none for now (nothing is kept under the Idempotency-Key then). One Idempotency-Key covers the whole batch.
         */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description Same key and body within 24 h replays the first response (Idempotent-Replayed: true) */
                    "Idempotency-Key"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["SendBatchRequest"];
                };
            };
            responses: {
                /** @description Some or all items accepted */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["SendBatchResponse"];
                    };
                };
                /** @description No item was accepted (the same body as 200), or the body is not an array of 1 to 100 requests ({errors}) */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["SendBatchResponse"] | components["schemas"]["errorsBody"];
                    };
                };
                /** @description Missing, invalid or revoked credential */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description Idempotency-Key reused with another body, or still in flight */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description Body too large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description Body is not application/json */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description Internal error */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description The credential cannot be checked, or the records or the queue reached, right now; nothing was done */
                503: {
                    headers: {
                        /** @description Whole seconds to wait before trying again */
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/attachments/presign": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Presign an upload: a URL to PUT the file to, its storage key and attachment id */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["PresignRequest"];
                };
            };
            responses: {
                /** @description Upload URL, valid for expires_in seconds */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PresignResponse"];
                    };
                };
                /** @description Invalid request */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description Missing, invalid or revoked credential */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description org_id is not the caller's organisation */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description Body too large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description Body is not application/json */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description Internal error */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description The credential cannot be checked, or the store reached, right now; nothing was done */
                503: {
                    headers: {
                        /** @description Whole seconds to wait before trying again */
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/attachments/download": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A temporary download URL for a stored attachment */
        get: {
            parameters: {
                query: {
                    key: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Download URL, valid for expires_in seconds */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["DownloadResponse"];
                    };
                };
                /** @description Invalid key */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description Missing, invalid or revoked credential */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description No such attachment of this organisation */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description Internal error */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description The credential cannot be checked, or the store reached, right now; nothing was done */
                503: {
                    headers: {
                        /** @description Whole seconds to wait before trying again */
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/attachments/delete": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete an attachment permanently */
        delete: {
            parameters: {
                query: {
                    key: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Deleted */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["DeleteByKeyResponse"];
                    };
                };
                /** @description Invalid key */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
                /** @description Missing, invalid or revoked credential */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description No such attachment of this organisation */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description Internal error */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description The credential cannot be checked, or the store reached, right now; nothing was done */
                503: {
                    headers: {
                        /** @description Whole seconds to wait before trying again */
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["errorBody"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/attachments/presign": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Presign an upload: a URL to PUT the file to, its storage key and attachment id */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["PresignRequest"];
                };
            };
            responses: {
                /** @description Upload URL, valid for expires_in seconds */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PresignResponse"];
                    };
                };
                /** @description Invalid request */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description Missing, invalid or revoked credential */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description org_id is not the caller's organisation */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description Body too large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description Body is not application/json */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description Internal error */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description The credential cannot be checked, or the store reached, right now; nothing was done */
                503: {
                    headers: {
                        /** @description Whole seconds to wait before trying again */
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/attachments/download": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A temporary download URL for an attachment id */
        get: {
            parameters: {
                query: {
                    attachment_id: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Download URL, valid for expires_in seconds */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["DownloadResponse"];
                    };
                };
                /** @description Invalid attachment_id */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description Missing, invalid or revoked credential */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description No such attachment of this organisation */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description Internal error */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description The credential cannot be checked, or the store reached, right now; nothing was done */
                503: {
                    headers: {
                        /** @description Whole seconds to wait before trying again */
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** This document */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description The OpenAPI 3.1 document of both API variants */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": Record<string, never>;
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/attachments": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete an attachment permanently by id */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["DeleteByIdRequest"];
                };
            };
            responses: {
                /** @description Deleted */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["DeleteByIdResponse"];
                    };
                };
                /** @description Invalid request */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description Missing, invalid or revoked credential */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description Attachment not found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description Body too large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description Body is not application/json */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description Internal error */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
                /** @description The credential cannot be checked, or the store reached, right now; nothing was done */
                503: {
                    headers: {
                        /** @description Whole seconds to wait before trying again */
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["messageBody"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        errorsBody: {
            errors: string[];
        };
        errorBody: {
            error: string;
        };
        messageBody: {
            message: string;
        };
        unavailableSendBody: {
            error: string;
            /** @description True when the provider may have accepted the message before failing (a timeout, a dropped connection, the server shutting down): check before sending it again, or retry with the same Idempotency-Key, which answers 409 instead of sending twice */
            may_have_been_sent: boolean;
        };
        EmailTag: {
            name: string;
            value: string;
        };
        Unsubscribe: {
            /** Format: uri */
            url: string;
            /**
             * Format: email
             * @description An email address (addr-spec, no display name)
             */
            mailto?: string;
        };
        SendEmailRequest: {
            /**
             * Format: email
             * @description An email address (addr-spec, no display name)
             */
            from: string;
            from_name?: string;
            to: string[];
            cc?: string[];
            bcc?: string[];
            reply_to?: string[];
            subject: string;
            body: {
                html?: string;
                text?: string;
            } & ({
                html: unknown;
            } | {
                text: unknown;
            });
            attachments?: {
                filename: string;
                key: string;
                content_type?: string;
                content_id?: string;
            }[];
            tags?: components["schemas"]["EmailTag"][];
            headers?: {
                [key: string]: string;
            };
            unsubscribe?: components["schemas"]["Unsubscribe"];
            /** Format: date-time */
            scheduled_at?: string;
        };
        SendEmailResponse: {
            message_id: string;
            from: string;
            to: string[];
            subject: string;
            attachments: string[];
            suppressed?: string[];
        };
        PresignRequest: {
            filename: string;
            content_type?: string;
            org_id?: string;
            content_length?: number;
        };
        PresignResponse: {
            url: string;
            key: string;
            expires_in: number;
            attachment_id: string;
        };
        DownloadResponse: {
            download_url: string;
            expires_in: number;
        };
        DeleteByKeyResponse: {
            deleted: boolean;
            key: string;
        };
        DeleteByIdRequest: {
            attachment_id: string;
        };
        DeleteByIdResponse: {
            deleted: boolean;
            attachment_id: string;
        };
        EmailRecipient: {
            email: string;
            /** @enum {string} */
            kind: "to" | "cc" | "bcc";
            /** @enum {string} */
            state: "scheduled" | "sending" | "sent" | "delivery_delayed" | "delivered" | "bounced" | "complained" | "suppressed" | "cancelled" | "failed" | "unknown";
            /** @description ISO 8601, UTC, to the millisecond */
            updated_at: string;
            detail?: string;
        };
        EmailAttachmentRecord: {
            filename: string;
            content_type: string;
            size: number;
            key?: string;
            content_id?: string;
        };
        EmailRecord: {
            id: string;
            organization_id: string;
            /** @description ISO 8601, UTC, to the millisecond */
            created_at: string;
            /** @enum {string} */
            status: "scheduled" | "sending" | "sent" | "delivery_delayed" | "delivered" | "bounced" | "complained" | "suppressed" | "cancelled" | "failed" | "unknown";
            from: string;
            from_name: string | null;
            subject: string;
            recipients: components["schemas"]["EmailRecipient"][];
            tags: components["schemas"]["EmailTag"][];
            attachments: components["schemas"]["EmailAttachmentRecord"][];
            html_bytes: number;
            text_bytes: number;
            provider: string | null;
            provider_message_id: string | null;
            idempotency_key: string | null;
            scheduled_at: string | null;
            last_event: {
                type: string;
                /** @description ISO 8601, UTC, to the millisecond */
                occurred_at: string;
            } | null;
            reason: string | null;
        };
        EmailList: {
            data: components["schemas"]["EmailRecord"][];
            next_cursor: string | null;
        };
        EmailEvent: {
            id: string;
            type: string;
            recipient: string | null;
            /** @description ISO 8601, UTC, to the millisecond */
            occurred_at: string;
            provider: string;
            bounce?: {
                kind: string;
                code?: string;
                diagnostic?: string;
            };
            click?: {
                url: string;
            };
        };
        EmailDetail: {
            id: string;
            organization_id: string;
            /** @description ISO 8601, UTC, to the millisecond */
            created_at: string;
            /** @enum {string} */
            status: "scheduled" | "sending" | "sent" | "delivery_delayed" | "delivered" | "bounced" | "complained" | "suppressed" | "cancelled" | "failed" | "unknown";
            from: string;
            from_name: string | null;
            subject: string;
            recipients: components["schemas"]["EmailRecipient"][];
            tags: components["schemas"]["EmailTag"][];
            attachments: components["schemas"]["EmailAttachmentRecord"][];
            html_bytes: number;
            text_bytes: number;
            provider: string | null;
            provider_message_id: string | null;
            idempotency_key: string | null;
            scheduled_at: string | null;
            last_event: {
                type: string;
                /** @description ISO 8601, UTC, to the millisecond */
                occurred_at: string;
            } | null;
            reason: string | null;
            events: components["schemas"]["EmailEvent"][];
        };
        SuppressRequest: {
            /**
             * Format: email
             * @description An email address (addr-spec, no display name)
             */
            email: string;
            /** @enum {string} */
            reason?: "bounced" | "complained" | "manual";
            detail?: string;
        };
        Suppression: {
            email: string;
            /** @enum {string} */
            reason: "bounced" | "complained" | "manual";
            created_at: string;
            message_id: string | null;
            detail: string | null;
        };
        SuppressionList: {
            data: components["schemas"]["Suppression"][];
            next_cursor: string | null;
        };
        UnsuppressResponse: {
            deleted: boolean;
            email: string;
        };
        ScheduledEmailResponse: {
            message_id: string;
            /** @enum {string} */
            status: "scheduled";
            scheduled_at: string;
            suppressed?: string[];
        };
        RescheduleRequest: {
            /** Format: date-time */
            scheduled_at: string;
        };
        CancelResponse: {
            message_id: string;
            /** @enum {string} */
            status: "cancelled";
        };
        /** @description 1 to 100 send requests. An item the schema refuses is reported in the answer's `errors` by its index; the others are still sent. */
        SendBatchRequest: components["schemas"]["SendEmailRequest"][];
        BatchAccepted: {
            index: number;
            message_id: string;
            /** @enum {string} */
            status: "sent" | "scheduled";
            scheduled_at?: string;
            suppressed?: string[];
        };
        BatchRefused: {
            index: number;
            errors: string[];
        };
        SendBatchResponse: {
            data: components["schemas"]["BatchAccepted"][];
            errors: components["schemas"]["BatchRefused"][];
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export type operations = Record<string, never>;
