package contract

// Error codes of materials, the files a person hands an Agent (docs/materials.md).
const (
	CodeMaterialInvalid  Code = "material_invalid"   // a material's name, size or content is refused, with the fix
	CodeMaterialNotFound Code = "material_not_found" // no material with that sha256 is in the area, or it no longer has its digest
	CodeMaterialWithheld Code = "material_withheld"  // the content was read but may not be sent to this Agent's model provider
)
