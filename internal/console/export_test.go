package console

// HTTPStatus exposes the /api/v1 status table to the external tests.
var HTTPStatus = httpStatus
