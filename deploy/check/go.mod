module github.com/taskloom/taskloom/deploy/check

go 1.26.8

require github.com/taskloom/taskloom v0.0.0

require helm.sh/helm/v3 v3.22.0 // indirect

replace github.com/taskloom/taskloom => ../..
