// Each of these names a file outside this folder, or none: none is read.
import "../../outside_escape.js";
import "https://cdn.example/lib.js";
import "lodash";
const todos = [];
