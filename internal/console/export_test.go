package console

// HTTPStatus exposes the /api/v1 status table to the external tests.
var HTTPStatus = httpStatus

// MaxRowsShown exposes the rows a page of a members' list shows.
const MaxRowsShown = maxRowsShown

// MaxOpsShown exposes the Operations a page shows of one Agent.
const MaxOpsShown = maxOpsShown

// MaxHistoryShown exposes the Requests a page of Needs you shows.
const MaxHistoryShown = maxHistoryShown

// MaxOpsAgentsShown exposes the Agents a page of the Operations page shows.
const MaxOpsAgentsShown = maxOpsAgentsShown

// ForwardedProto exposes the reader of the Forwarded header's proto to its fuzzer.
var ForwardedProto = forwardedProto
