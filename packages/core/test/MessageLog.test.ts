import { MessageLog, Suppressions } from "@mailroom/core"
import { MessageLogSuite, SuppressionsSuite } from "@mailroom/core/testing"

MessageLogSuite("memory", { layer: MessageLog.layerMemory() })
SuppressionsSuite("memory", { layer: Suppressions.layerMemory() })
