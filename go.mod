module github.com/anvilmetal/anvil

go 1.26.8
