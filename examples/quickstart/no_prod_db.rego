package ahp.tool.before.myteam

deny contains {
	"reason": "Production databases are off limits; use staging-db instead.",
	"code": "com.example.myteam.prod_db",
} if {
	input.ahp.tool.family == "shell"
	contains(input.tool.input.command, "prod-db.internal")
}
